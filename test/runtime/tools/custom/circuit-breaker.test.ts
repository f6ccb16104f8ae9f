import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../../../runtime/tools/custom/circuit-breaker.ts';

function breaker() {
  let now = 0;
  const circuit = new CircuitBreaker({ threshold: 3, coolDownMs: 1000, now: () => now });
  return { circuit, advance: (ms: number) => (now += ms) };
}

describe('CircuitBreaker', () => {
  it('opens after three failures in a row, not after failures with successes between', () => {
    const { circuit } = breaker();
    circuit.failed('a');
    circuit.failed('b');
    circuit.succeeded();
    circuit.failed('c');
    circuit.failed('d');
    expect(circuit.state).toBe('closed');
    circuit.failed('e');
    expect(circuit.state).toBe('open');
    expect(circuit.tryEnter()).toBe(false);
    expect(circuit.lastFailure).toBe('e');
  });

  it('lets one trial through after the cool-down; its failure reopens, its success closes', () => {
    const { circuit, advance } = breaker();
    for (const r of ['1', '2', '3']) circuit.failed(r);
    advance(999);
    expect(circuit.retryInMs).toBe(1);
    expect(circuit.tryEnter()).toBe(false);
    advance(1);
    expect(circuit.state).toBe('half-open');
    expect(circuit.tryEnter()).toBe(true);
    expect(circuit.tryEnter()).toBe(false); // one trial at a time
    circuit.failed('again');
    expect(circuit.state).toBe('open');
    advance(1000);
    expect(circuit.tryEnter()).toBe(true);
    circuit.succeeded();
    expect(circuit.state).toBe('closed');
    expect(circuit.tryEnter()).toBe(true);
  });

  it('a cancelled trial frees the slot without deciding anything', () => {
    const { circuit, advance } = breaker();
    for (const r of ['1', '2', '3']) circuit.failed(r);
    advance(1000);
    expect(circuit.tryEnter()).toBe(true);
    circuit.released();
    expect(circuit.state).toBe('half-open');
    expect(circuit.tryEnter()).toBe(true);
  });
});
