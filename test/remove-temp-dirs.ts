/**
 * A setup file (vitest.config.ts): runs before every test file, also in a
 * worker that runs file after file in one module graph, so the temp dirs a
 * file made are removed when that file ends. Without it each run of the suite
 * left over a gigabyte under /tmp (runc roots, base images, projects).
 */
import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/project.ts';

afterAll(removeTempDirs);
