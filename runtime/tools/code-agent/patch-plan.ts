/**
 * file_patch, first half: check every operation against the files as they
 * will be when the operations before it have run, and compute each new
 * content — all before anything is written. A plan that comes out of here
 * names only guarded paths and operations that fit the files.
 */
import type { DiagnosticCode } from '../../diagnostic-codes.ts';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { applyPatch } from 'diff';
import type { GuardedPath, PathGuard } from '../../guard/path-guard.ts';
import { readVerified, type FileAccessOptions } from '../../guard/verified-open.ts';
import { fsFailure, guarded, isFailure, looksBinary, type Failure } from '../fs-results.ts';
import { fail } from '../model.ts';
import { WHOLE_READ_LIMIT } from './file-read.ts';
import { applyEdit, unifiedDiff, type TextEdit } from './text-edits.ts';

export interface PatchOperation {
  op: 'add' | 'update' | 'delete' | 'move';
  path: string;
  to?: string;
  content?: string;
  edits?: TextEdit[];
  diff?: string;
}

export type PatchStep =
  /** `creates`: an add (the file must not exist when applied); otherwise an update of the file the plan read. */
  | { kind: 'write'; target: GuardedPath; content: string; creates: boolean }
  | { kind: 'delete'; target: GuardedPath }
  | { kind: 'move'; target: GuardedPath; to: GuardedPath };

export interface PatchChange {
  op: PatchOperation['op'];
  path: string;
  to?: string;
  diff?: string;
}

export interface PatchPlan {
  steps: PatchStep[];
  changes: PatchChange[];
}

/** What a path holds at a point in the plan: a file (its bytes), a directory, or nothing. */
type Entry = { kind: 'file'; bytes?: Buffer; source?: string; size: number } | { kind: 'directory' } | { kind: 'absent' };

export async function planPatch(operations: readonly PatchOperation[], guard: PathGuard, access: FileAccessOptions = {}): Promise<PatchPlan | Failure> {
  const state = new Map<string, Entry>();
  const entryAt = async (absolute: string): Promise<Entry> => {
    const known = state.get(absolute);
    if (known) return known;
    const info = await stat(absolute).catch(() => undefined);
    // A file on disk is read only if an update needs its text (a move or a delete does not).
    const entry: Entry = !info ? { kind: 'absent' } : info.isDirectory() ? { kind: 'directory' } : { kind: 'file', source: absolute, size: info.size };
    state.set(absolute, entry);
    return entry;
  };
  /** A new file needs every existing ancestor to be a directory. */
  const parentProblem = async (target: GuardedPath): Promise<string | undefined> => {
    for (let dir = dirname(target.absolute); dir !== dirname(dir); dir = dirname(dir)) {
      const entry = await entryAt(dir);
      if (entry.kind === 'file') return `its parent ${guard.relativeOf(dir)} is a file`;
      if (entry.kind === 'directory') return undefined;
    }
    return undefined;
  };

  const steps: PatchStep[] = [];
  const changes: PatchChange[] = [];
  for (const [i, op] of operations.entries()) {
    const label = `operation ${i + 1} (${op.op} ${op.path})`;
    const problem = (code: DiagnosticCode, message: string, hint?: string) => fail(code, `${label}: ${message}; nothing was changed`, hint) as Failure;
    const shapeProblem = checkShape(op);
    if (shapeProblem) return problem('FORGE_PATCH_INVALID', shapeProblem);

    const target = guarded(guard, op.path);
    if (isFailure(target)) return problem(target.error.code, target.error.message, target.error.hint);
    let entry: Entry;
    try {
      entry = await entryAt(target.absolute);
    } catch (err) {
      const failure = fsFailure(err, op.path);
      return problem(failure.error.code, failure.error.message);
    }
    if (entry.kind === 'directory') return problem('FORGE_FILE_IS_DIRECTORY', `"${op.path}" is a directory`);

    if (op.op === 'add') {
      if (entry.kind === 'file') return problem('FORGE_FILE_EXISTS', `"${op.path}" already exists`, 'use op "update" to change an existing file');
      const parent = await parentProblem(target);
      if (parent) return problem('FORGE_FILE_NOT_DIRECTORY', `"${op.path}" cannot be created: ${parent}`);
      state.set(target.absolute, fileWith(op.content!));
      steps.push({ kind: 'write', target, content: op.content!, creates: true });
      changes.push({ op: 'add', path: target.relative });
      continue;
    }
    if (entry.kind === 'absent') return problem('FORGE_FILE_NOT_FOUND', `"${op.path}" does not exist`, op.op === 'update' ? 'use op "add" to create a file' : undefined);

    if (op.op === 'delete') {
      state.set(target.absolute, { kind: 'absent' });
      steps.push({ kind: 'delete', target });
      changes.push({ op: 'delete', path: target.relative });
      continue;
    }
    if (op.op === 'move') {
      const to = guarded(guard, op.to!);
      if (isFailure(to)) return problem(to.error.code, to.error.message, to.error.hint);
      const destination = await entryAt(to.absolute);
      if (destination.kind !== 'absent') return problem('FORGE_FILE_EXISTS', `the destination "${op.to}" already exists`, 'delete it first, or choose another name');
      const parent = await parentProblem(to);
      if (parent) return problem('FORGE_FILE_NOT_DIRECTORY', `"${op.to}" cannot be created: ${parent}`);
      state.set(to.absolute, entry);
      state.set(target.absolute, { kind: 'absent' });
      steps.push({ kind: 'move', target, to });
      changes.push({ op: 'move', path: target.relative, to: to.relative });
      continue;
    }

    // update
    if (entry.size > WHOLE_READ_LIMIT) return problem('FORGE_FILE_TOO_LARGE', `"${op.path}" is ${entry.size} bytes; files up to ${WHOLE_READ_LIMIT} bytes can be edited`);
    let bytes: Buffer;
    try {
      bytes = entry.bytes ?? (await readVerified(guard, entry.source!, op.path, access)).bytes;
    } catch (err) {
      const failure = fsFailure(err, op.path);
      return problem(failure.error.code, failure.error.message);
    }
    if (looksBinary(bytes)) return problem('FORGE_FILE_BINARY', `"${op.path}" is a binary file`);
    const before = bytes.toString('utf8');
    const after = updatedContent(before, op, `"${target.relative}"`);
    if (typeof after !== 'string') return problem(after.code, after.message, after.hint);
    state.set(target.absolute, fileWith(after));
    steps.push({ kind: 'write', target, content: after, creates: false });
    changes.push({ op: 'update', path: target.relative, diff: unifiedDiff(target.relative, before, after) });
  }
  return { steps, changes };
}

function fileWith(content: string): Entry {
  const bytes = Buffer.from(content);
  return { kind: 'file', bytes, size: bytes.length };
}

function checkShape(op: PatchOperation): string | undefined {
  const given = (['content', 'edits', 'diff', 'to'] as const).filter((k) => op[k] !== undefined);
  const expect = (allowed: readonly string[], what: string) => {
    const extra = given.filter((k) => !allowed.includes(k));
    return extra.length ? `"${extra.join('", "')}" does not belong to ${what}` : undefined;
  };
  switch (op.op) {
    case 'add':
      return op.content === undefined ? '"add" needs "content"' : expect(['content'], '"add"');
    case 'delete':
      return expect([], '"delete"');
    case 'move':
      return op.to === undefined ? '"move" needs "to"' : expect(['to'], '"move"');
    case 'update': {
      const ways = given.filter((k) => k !== 'to');
      if (ways.length !== 1) return '"update" needs exactly one of "content", "edits" or "diff"';
      return expect(['content', 'edits', 'diff'], '"update"');
    }
  }
}

function updatedContent(before: string, op: PatchOperation, where: string): string | { code: DiagnosticCode; message: string; hint?: string } {
  if (op.content !== undefined) return op.content;
  if (op.diff !== undefined) {
    let applied: string | false;
    try {
      applied = applyPatch(before, op.diff);
    } catch (err) {
      return { code: 'FORGE_PATCH_DIFF', message: `the diff for ${where} cannot be read: ${(err as Error).message}`, hint: 'give a unified diff with @@ hunk headers' };
    }
    if (applied === false) return { code: 'FORGE_PATCH_DIFF', message: `the diff for ${where} does not apply: its context lines do not match the file`, hint: 'read the file again and make the diff from its current content' };
    return applied;
  }
  let content = before;
  for (const [i, edit] of (op.edits ?? []).entries()) {
    const outcome = applyEdit(content, edit, where);
    if (!outcome.ok) return { code: outcome.code, message: `edit ${i + 1}: ${outcome.message}`, hint: outcome.hint };
    content = outcome.content;
  }
  return content;
}
