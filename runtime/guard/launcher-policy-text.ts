/**
 * The launcher policy as text, for `forge tool describe cli_execute`: per
 * program, how it can run others and what is refused.
 */
import { LAUNCHER_POLICY, type OptionRule } from './launcher-policy.ts';

function spell(rule: OptionRule): string[] {
  return [...(rule.exact ?? []), ...(rule.short ?? []).map((s) => `-${s}`), ...(rule.long ?? []).map((l) => `--${l}`)];
}

export function launcherPolicyText(): string {
  const lines = [
    'Launcher policy: programs that can run other programs, and what cli_execute refuses of them (long options also abbreviated or with =value, short ones also clustered).',
  ];
  for (const row of LAUNCHER_POLICY) {
    lines.push('', `${row.programs.join(', ')}`, `    can run programs through: ${row.runs}`);
    if (row.refused) {
      lines.push('    refused: always');
      continue;
    }
    const options = (row.options ?? []).flatMap(spell);
    if (options.length) lines.push(`    refused options: ${options.join(' ')}`);
    for (const [sub, rules] of Object.entries(row.subcommands ?? {})) {
      if (rules !== 'refused') lines.push(`    refused after "${sub}": ${rules.flatMap(spell).join(' ')}`);
    }
    const refusedSubcommands = Object.entries(row.subcommands ?? {}).filter(([, rules]) => rules === 'refused').map(([sub]) => sub);
    if (refusedSubcommands.length) lines.push(`    refused subcommands: ${refusedSubcommands.join(' ')}`);
    for (const operand of row.operands ?? []) lines.push(`    refused arguments matching /${operand.pattern}/: ${operand.why}`);
    if (row.script) lines.push(`    the ${row.script} program text is read: ${row.runs}`);
    if (row.wrapper) lines.push('    the command it runs must be on the allowlist and is checked the same way');
    if (row.prependArgs) lines.push(`    always run with: ${row.prependArgs.join(' ')}`);
    if (row.env) lines.push(`    environment set: ${Object.entries(row.env).filter(([k]) => !k.startsWith('GIT_CONFIG_KEY') && !k.startsWith('GIT_CONFIG_VALUE')).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    if (row.limits) lines.push(`    note: ${row.limits}`);
  }
  return lines.join('\n');
}
