/**
 * A table's value for a key someone else wrote (a command line, forge.yaml,
 * a docstring, a tool call): the table's own entries only. `table[key]`
 * answers `constructor`, `toString` or `__proto__` with what every object
 * inherits, and `key in table` says yes to them.
 */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
