/** IANA time zone names: whether one is known, and the closest known one if not. */
import { didYouMean } from './suggest.ts';

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A hint for an unknown zone: a close match, or what a name looks like. */
export function timeZoneHint(name: string): string {
  const known = [...Intl.supportedValuesOf('timeZone'), 'UTC'];
  return didYouMean(name, known) ?? 'use an IANA time zone name such as UTC, Europe/Paris or America/New_York';
}
