/**
 * The signals that end a forge process early: Ctrl-C, a `kill` or a supervisor's stop (timeout, CI), the
 * terminal closing. With their numbers, for the 128 + number exit status a shell gives a process they end.
 */
export const STOP_SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;
export const STOP_SIGNAL_NAMES = Object.keys(STOP_SIGNALS) as StopSignal[];
