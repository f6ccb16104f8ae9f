/**
 * A stand-in for a function, class or object that is loaded on first use.
 * Calls, `new` (also as a base class), property reads and writes, `in` and
 * instanceof all reach the real value, which `load` returns once.
 *
 * The prebuilt third-party modules stand behind these in the runtime core
 * (stages/vendor-modules.ts) and in the `forge` command (scripts/build-cli.mjs),
 * so that a process evaluates a library only when it uses it.
 */
export function lazyValue<T extends object>(load: () => T): T {
  let value: T | undefined;
  const real = () => (value ??= load());
  const proxy: T = new Proxy(function standIn() {} as unknown as T, {
    apply: (_target, self, args) => Reflect.apply(real() as (...a: unknown[]) => unknown, self, args),
    construct: (_target, args, newTarget) => Reflect.construct(real() as new (...a: unknown[]) => object, args, newTarget === proxy ? (real() as new (...a: unknown[]) => object) : newTarget),
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, v) => Reflect.set(real(), key, v),
    has: (_target, key) => key in real(),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  return proxy;
}
