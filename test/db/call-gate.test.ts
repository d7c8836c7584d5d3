import { describe, expect, it } from 'vitest';
import { CallGate } from '../../src/db/call-gate.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CallGate', () => {
  it('admits up to its limit at once and the rest in arrival order', async () => {
    const gate = new CallGate(2);
    const admitted: number[] = [];
    const slots = [0, 1, 2, 3].map((i) => {
      const slot = gate.enter();
      void slot.ready.then(() => admitted.push(i));
      return slot;
    });
    await tick();
    expect(admitted).toEqual([0, 1]);
    expect(gate.inFlight).toBe(2);
    expect(gate.waiting).toBe(2);
    slots[1].leave();
    await tick();
    expect(admitted).toEqual([0, 1, 2]);
    slots[0].leave();
    await tick();
    expect(admitted).toEqual([0, 1, 2, 3]);
    expect(gate.waiting).toBe(0);
  });

  it('skips a waiter that gave up and never admits it', async () => {
    const gate = new CallGate(1);
    const first = gate.enter();
    const quitter = gate.enter();
    const third = gate.enter();
    let quitterAdmitted = false;
    let thirdAdmitted = false;
    void quitter.ready.then(() => (quitterAdmitted = true));
    void third.ready.then(() => (thirdAdmitted = true));
    quitter.leave(); // its deadline passed while waiting
    first.leave();
    await tick();
    expect(quitterAdmitted).toBe(false);
    expect(thirdAdmitted).toBe(true);
    expect(gate.inFlight).toBe(1);
  });

  it('counts a slot once however often it is left', async () => {
    const gate = new CallGate(1);
    const slot = gate.enter();
    await slot.ready;
    slot.leave();
    slot.leave();
    expect(gate.inFlight).toBe(0);
    const next = gate.enter();
    await next.ready;
    expect(gate.inFlight).toBe(1);
  });

  it('stays fast and small under sustained overload', async () => {
    // The postgres.js queue this gate replaces kept a hole per handed-out query; here 100,000
    // calls through a full gate leave nothing behind.
    const gate = new CallGate(4);
    let done = 0;
    const worker = async () => {
      for (let i = 0; i < 5_000; i++) {
        const slot = gate.enter();
        await slot.ready;
        slot.leave();
        done += 1;
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    expect(done).toBe(100_000);
    expect(gate.inFlight).toBe(0);
    expect((gate as unknown as { waiters: unknown[] }).waiters.length).toBe(0);
  });

  it('refuses a limit below one', () => {
    expect(() => new CallGate(0)).toThrow(RangeError);
  });
});
