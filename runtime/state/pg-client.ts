/**
 * The `pg` client, behind one module: a build splices a prebuilt,
 * compressed copy of it into the runtime core (stages/pg-splice.ts), inflated and
 * evaluated only when a process opens a Postgres state store.
 */
import pg from 'pg';

export default pg;
