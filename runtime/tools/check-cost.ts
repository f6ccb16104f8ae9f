/**
 * What checking a value against a schema from outside (an MCP server's, an
 * OpenAPI document's, a forged tool's) would cost, counted before ajv runs.
 *
 * ajv tries an `anyOf` branch by branch, and each branch applies to the same
 * value: `{xs: array of anyOf 1,000 objects}` and a 909 kB body of items
 * that match only the last branch held the server's one thread for 31 s,
 * under the 1 MB body limit. Nested alternatives multiply, and a `$ref`
 * back into an `anyOf` doubles the work at every level of the value.
 *
 * So the value is walked once beside the schema, summing the schemas that
 * would apply to each of its parts (in-place ones: allOf, anyOf, oneOf,
 * not, if/then/else, $ref; and for its members and items, the ones that
 * reach them), each weighted by what it reads: a string keyword reads the
 * whole string, an `enum` compares against each member, `uniqueItems`
 * reads the whole array. The count is an upper bound — every branch is
 * counted as tried, every `patternProperties` schema as matching — and the
 * walk stops as soon as it passes the budget. A set of schemas applying to
 * one part is a state; its expansion and its members' states are kept, so
 * the walk costs a few map look-ups per part of the value.
 */
import type { JSONSchema } from './model.ts';
import { isRecord } from '../is-record.ts';

/**
 * The most a value may cost: about a second of ajv on a 2-core machine for
 * the costliest kind of unit (an object branch that fails), measured with
 * bench/schema-cost-bench.ts. A schema with no alternatives costs about one
 * unit per part of the value, so a 1 MB body stays well within it.
 */
export const CHECK_COST_BUDGET = 3_000_000;

/** Characters of a string one unit pays for, for each keyword that reads the whole string (pattern, format, length, enum). */
const STRING_CHARS_PER_UNIT = 64;
/** Members of an `enum` one unit pays for (ajv compares them one by one). */
const ENUM_MEMBERS_PER_UNIT = 16;

/** One schema object as the count sees it. */
interface CostNode {
  /** Units applying it to any value costs (its own keywords). */
  own: number;
  /** It has a keyword that reads a string value whole. */
  readsStrings: boolean;
  /** It has uniqueItems: an array's whole contents are read. */
  readsArrays: boolean;
  /** Schemas applying to the same value. */
  inPlace: CostNode[];
  properties: Map<string, CostNode>;
  /** Schemas applying to every member (patternProperties, counted as matching every name; additionalProperties; unevaluatedProperties). */
  anyMember: CostNode[];
  /** Applying to every member not named in `properties` only (additionalProperties). */
  otherMember: CostNode[];
  propertyNames?: CostNode;
  prefixItems: CostNode[];
  /** Applying to items past prefixItems (items, additionalItems). */
  restItems: CostNode[];
  /** Applying to every item (contains, unevaluatedItems). */
  anyItem: CostNode[];
}

/** The schemas applying to one part of a value, with how many times each applies, expanded through in-place ones. */
class CostState {
  readonly units: number;
  readonly stringReaders: number;
  readonly arrayReaders: number;
  private readonly names = new Set<string>();
  private readonly members = new Map<string, CostState | undefined>();
  private readonly items = new Map<number, CostState | undefined>();
  /** What applies to members no schema here names (one state for them all). */
  private otherState?: CostState;
  private otherDone = false;
  private nameState?: CostState;
  /** Items before this index may each have their own schemas (prefixItems); from it on, all have the same. */
  prefixLength = 0;

  constructor(
    readonly applied: Map<CostNode, number>,
    private readonly model: CostModel,
  ) {
    let units = 0;
    let stringReaders = 0;
    let arrayReaders = 0;
    for (const [node, times] of applied) {
      units += node.own * times;
      if (node.readsStrings) stringReaders += times;
      if (node.readsArrays) arrayReaders += times;
      for (const name of node.properties.keys()) this.names.add(name);
      this.prefixLength = Math.max(this.prefixLength, node.prefixItems.length);
    }
    this.units = units;
    this.stringReaders = stringReaders;
    this.arrayReaders = arrayReaders;
  }

  /** What applies to the member `name` of an object; undefined when the count passes the budget. */
  member(name: string): CostState | undefined {
    const named = this.names.has(name);
    if (named ? this.members.has(name) : this.otherDone) return named ? this.members.get(name) : this.otherState;
    const reached = new Map<CostNode, number>();
    for (const [node, times] of this.applied) {
      const declared = named ? node.properties.get(name) : undefined;
      if (declared) add(reached, declared, times);
      else for (const other of node.otherMember) add(reached, other, times);
      for (const any of node.anyMember) add(reached, any, times);
    }
    const state = this.model.state(reached);
    if (named) this.members.set(name, state);
    else [this.otherState, this.otherDone] = [state, true];
    return state;
  }

  /** What applies to an object's member names (propertyNames). */
  memberName(): CostState | undefined {
    if (this.nameState) return this.nameState;
    const reached = new Map<CostNode, number>();
    for (const [node, times] of this.applied) if (node.propertyNames) add(reached, node.propertyNames, times);
    return (this.nameState = this.model.state(reached));
  }

  /** What applies to item `index` of an array. */
  item(index: number): CostState | undefined {
    const key = index < this.prefixLength ? index : -1;
    if (this.items.has(key)) return this.items.get(key);
    const reached = new Map<CostNode, number>();
    for (const [node, times] of this.applied) {
      const prefix = key >= 0 ? node.prefixItems[key] : undefined;
      if (prefix) add(reached, prefix, times);
      else if (key < 0 || key >= node.prefixItems.length) for (const rest of node.restItems) add(reached, rest, times);
      for (const any of node.anyItem) add(reached, any, times);
    }
    const state = this.model.state(reached);
    this.items.set(key, state);
    return state;
  }
}

function add(applied: Map<CostNode, number>, node: CostNode, times: number): void {
  applied.set(node, (applied.get(node) ?? 0) + times);
}

/** One schema's nodes and the states met so far (kept for the schema's life: the next call meets the same ones). */
class CostModel {
  private readonly states = new Map<string, CostState>();
  private readonly ids = new Map<CostNode, number>();
  /** States made (kept by their parents as well as here). */
  get size(): number {
    return this.states.size;
  }
  readonly root: CostState | undefined;

  constructor(
    rootNode: CostNode,
    readonly budget: number,
  ) {
    this.root = this.state(new Map([[rootNode, 1]]));
  }

  /**
   * The state of `reached` expanded through in-place schemas, each counted as many times as the
   * schemas applying it are; undefined when that passes the budget, or when a schema applies itself
   * in place (`{$ref: "#"}`: ajv would recurse until its stack overflows).
   */
  state(reached: Map<CostNode, number>): CostState | undefined {
    const order = inPlaceOrder(reached.keys());
    if (!order) return undefined;
    const applied = new Map(reached);
    let total = 0;
    // Each node comes after every node that applies it, so its count is whole when it is passed on.
    for (const node of order) {
      const times = applied.get(node) ?? 0;
      total += node.own * times;
      if (total > this.budget) return undefined;
      for (const inner of node.inPlace) add(applied, inner, times);
    }
    const key = [...applied].map(([node, times]) => `${this.id(node)}*${times}`).sort().join(',');
    let state = this.states.get(key);
    if (!state) {
      state = new CostState(applied, this);
      this.states.set(key, state);
    }
    return state;
  }

  private id(node: CostNode): number {
    let id = this.ids.get(node);
    if (id === undefined) this.ids.set(node, (id = this.ids.size));
    return id;
  }
}

/**
 * `from` and every node they apply in place, each after all that apply it (a depth-first walk's
 * reverse post-order); undefined when the in-place schemas form a cycle. Linear in the nodes and
 * edges: alternatives that each apply the same alternatives (allOf [A, A], A = allOf [B, B]...)
 * are counted by multiplying, not by walking every path.
 */
function inPlaceOrder(from: Iterable<CostNode>): CostNode[] | undefined {
  const done = new Set<CostNode>();
  const open = new Set<CostNode>();
  const postOrder: CostNode[] = [];
  for (const start of from) {
    if (done.has(start)) continue;
    const stack: [CostNode, number][] = [[start, 0]];
    open.add(start);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const [node, next] = top;
      if (next < node.inPlace.length) {
        top[1]++;
        const inner = node.inPlace[next]!;
        if (open.has(inner)) return undefined;
        if (!done.has(inner)) {
          open.add(inner);
          stack.push([inner, 0]);
        }
      } else {
        stack.pop();
        open.delete(node);
        done.add(node);
        postOrder.push(node);
      }
    }
  }
  return postOrder.reverse();
}

const models = new WeakMap<object, CostModel>();

/**
 * States one schema keeps between calls. A schema can reach many (a state per
 * path through it, and per count of branches): past this, they are made
 * again as calls need them, so a model's memory stays bounded.
 */
const MAX_KEPT_STATES = 10_000;

/** Units checking `value` against `schema` costs, or undefined when that passes `budget` (counting stops there). */
export function checkCost(schema: JSONSchema, value: unknown, budget = CHECK_COST_BUDGET): number | undefined {
  let model = models.get(schema);
  if (!model || model.budget !== budget) {
    model = new CostModel(new SchemaReader(schema).root, budget);
    models.set(schema, model);
  }
  try {
    return countUnits(model, value, budget);
  } finally {
    if (model.size > MAX_KEPT_STATES) models.delete(schema);
  }
}

function countUnits(model: CostModel, value: unknown, budget: number): number | undefined {
  const root = model.root;
  if (!root) return undefined;
  if (value === null || typeof value !== 'object') {
    const units = scalarUnits(value, root);
    return units <= budget ? units : undefined;
  }
  let units = 0;
  // Two stacks rather than one of pairs, and scalars counted where they are met: a 1 MB array is
  // 300,000 parts, and the count should cost less than the check it guards.
  const parts: object[] = [value];
  const states: CostState[] = [root];
  while (parts.length) {
    const part = parts.pop() as object;
    const state = states.pop()!;
    units += state.units;
    if (Array.isArray(part)) {
      if (state.arrayReaders) units += state.arrayReaders * partsIn(part, budget);
      let next: CostState | undefined;
      for (let i = 0; i < part.length; i++) {
        if (i <= state.prefixLength || !next) next = state.item(i); // from prefixLength on, one state serves
        if (!next) return undefined;
        const item: unknown = part[i];
        if (item !== null && typeof item === 'object') {
          parts.push(item);
          states.push(next);
        } else units += scalarUnits(item, next);
      }
    } else {
      const naming = state.memberName();
      if (!naming) return undefined;
      for (const name in part) {
        if (!Object.hasOwn(part, name)) continue;
        const next = state.member(name);
        if (!next) return undefined;
        units += scalarUnits(name, naming);
        const member: unknown = (part as Record<string, unknown>)[name];
        if (member !== null && typeof member === 'object') {
          parts.push(member);
          states.push(next);
        } else units += scalarUnits(member, next);
      }
    }
    if (units > budget) return undefined;
  }
  return units;
}

function scalarUnits(part: unknown, state: CostState): number {
  return state.units + (typeof part === 'string' ? state.stringReaders * Math.ceil(part.length / STRING_CHARS_PER_UNIT) : 0);
}

/** The parts of `value` (itself, its items and members, theirs...), counted up to `limit`. */
function partsIn(value: unknown, limit: number): number {
  let count = 0;
  const pending = [value];
  while (pending.length && count <= limit) {
    const part = pending.pop();
    count++;
    if (part !== null && typeof part === 'object') for (const child of Object.values(part)) pending.push(child);
  }
  return count;
}

/** Turns a schema document into CostNodes, one per schema object, following `$ref`s within the document. */
class SchemaReader {
  private readonly nodes = new Map<unknown, CostNode>();
  /** Every schema object by its absolute address: `base#/json/pointer`, `base#anchor`. */
  private readonly addresses = new Map<string, unknown>();
  private readonly baseOf = new Map<unknown, string>();
  readonly root: CostNode;

  constructor(private readonly document: JSONSchema) {
    this.index(document, ROOT_BASE, ROOT_BASE, '');
    this.root = this.node(document);
  }

  /**
   * Records where each object of the document can be reached from: its pointer within the resource
   * ($id) that holds it, its $id, its anchors. Every object is recorded, data (an `enum`'s) too: a
   * map of schemas may name a member "enum", and an address too many is never looked up.
   */
  private index(value: unknown, base: string, resource: string, pointer: string): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.index(item, base, resource, `${pointer}/${i}`));
      return;
    }
    // An object met again is not walked again: a schema parsed from JSON shares none, one made in
    // code may share one many times over (allOf [A, A], A = allOf [B, B]...), which is a path each.
    if (!isRecord(value) || this.baseOf.has(value)) return;
    let here = base;
    if (typeof value.$id === 'string' && value.$id.startsWith('#')) {
      this.addresses.set(`${resource}#${value.$id.slice(1)}`, value); // draft 7's anchor
    } else if (typeof value.$id === 'string') {
      here = resolve(value.$id, base);
      resource = here.split('#')[0]!;
      pointer = '';
      this.addresses.set(`${resource}#`, value);
    }
    this.baseOf.set(value, here);
    this.addresses.set(`${resource}#${pointer}`, value);
    for (const anchor of [value.$anchor, value.$dynamicAnchor]) if (typeof anchor === 'string') this.addresses.set(`${resource}#${anchor}`, value);
    for (const [key, inner] of Object.entries(value)) this.index(inner, here, resource, `${pointer}/${escape(key)}`);
  }

  private node(schema: unknown): CostNode {
    const known = this.nodes.get(schema);
    if (known) return known;
    const node: CostNode = {
      own: 1,
      readsStrings: false,
      readsArrays: false,
      inPlace: [],
      properties: new Map(),
      anyMember: [],
      otherMember: [],
      prefixItems: [],
      restItems: [],
      anyItem: [],
    };
    this.nodes.set(schema, node);
    if (!isRecord(schema)) return node; // true, false
    const s = schema as Record<string, unknown>;
    const list = (value: unknown): CostNode[] => (Array.isArray(value) ? value.map((v) => this.node(v)) : value === undefined ? [] : [this.node(value)]);
    const map = (value: unknown): unknown[] => (isRecord(value) ? Object.values(value) : []);
    // A member that is an object or an array is compared deeply, at up to its whole size (the string keywords' rate).
    const deepUnits = (member: unknown) => (member !== null && typeof member === 'object' ? Math.ceil(JSON.stringify(member).length / STRING_CHARS_PER_UNIT) : 0);
    if (Array.isArray(s.enum)) node.own += Math.ceil(s.enum.length / ENUM_MEMBERS_PER_UNIT) + s.enum.reduce((sum: number, member) => sum + deepUnits(member), 0);
    if ('const' in s) node.own += deepUnits(s.const);
    node.readsStrings = ['pattern', 'format', 'minLength', 'maxLength', 'enum', 'const', 'contentEncoding', 'contentMediaType'].some((k) => k in s);
    node.readsArrays = s.uniqueItems === true;
    for (const key of ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else']) node.inPlace.push(...list(s[key]));
    for (const value of [...map(s.dependentSchemas), ...map(s.dependencies)]) if (!Array.isArray(value)) node.inPlace.push(this.node(value));
    for (const key of ['$ref', '$dynamicRef', '$recursiveRef']) if (typeof s[key] === 'string') node.inPlace.push(this.node(this.target(s[key] as string, schema)));
    if (isRecord(s.properties)) for (const [name, value] of Object.entries(s.properties)) node.properties.set(name, this.node(value));
    node.anyMember.push(...map(s.patternProperties).map((v) => this.node(v)), ...list(s.unevaluatedProperties));
    node.otherMember.push(...list(s.additionalProperties));
    if (s.propertyNames !== undefined) node.propertyNames = this.node(s.propertyNames);
    // Draft 7's `items: [...]` is 2020-12's prefixItems; what follows it is additionalItems or items.
    if (Array.isArray(s.items)) node.prefixItems.push(...list(s.items));
    else node.restItems.push(...list(s.items));
    node.prefixItems.push(...list(s.prefixItems));
    node.restItems.push(...list(s.additionalItems));
    node.anyItem.push(...list(s.contains), ...list(s.unevaluatedItems));
    return node;
  }

  /**
   * The schema a `$ref` names. One ajv resolves but this does not (it
   * compiles only refs it finds in the document) is counted as the whole
   * document, which holds it.
   */
  private target(ref: string, from: object): unknown {
    const address = resolve(ref, this.baseOf.get(from) ?? ROOT_BASE);
    const [resource, fragment = ''] = address.split('#');
    const decoded = decodeURIComponent(fragment);
    return this.addresses.get(`${resource}#${decoded}`) ?? this.addresses.get(`${resource}#${decoded.replace(/\/$/, '')}`) ?? this.document;
  }
}

/** The base a schema without `$id` resolves its `$ref`s against (ajv's is empty; any fixed address serves). */
const ROOT_BASE = 'forge-schema:/root.json';

function resolve(ref: string, base: string): string {
  try {
    const url = new URL(ref, base);
    return url.hash ? url.href : `${url.href}#`;
  } catch {
    return `${base.split('#')[0]}#`;
  }
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

