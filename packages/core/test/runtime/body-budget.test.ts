import { describe, expect, it } from 'vitest';
import { isTiffinError } from '../../src/index.js';
import { BodyBudget } from '../../src/runtime/body-budget.js';

describe('BodyBudget reservations', () => {
  it('one reservation per call, kept on the call, whose bytes come back when the call closes', () => {
    const budget = new BodyBudget(100, 1);
    const call: { onClose: Array<() => void>; bodyReservation?: ReturnType<BodyBudget['reservationFor']> } = {
      onClose: [],
    };
    const first = budget.reservationFor(call);
    // Two readers of one body (the server's reader and a descriptor's) share it: the larger total counts.
    expect(budget.reservationFor(call)).toBe(first);
    expect(call.bodyReservation).toBe(first);
    first.reach(60);
    first.reach(40);
    expect(budget.held).toBe(60);
    expect(call.onClose).toHaveLength(1);

    // Another call cannot take the budget past its bound: 503 BODY_BUDGET_FULL, nothing held for it.
    const other = { onClose: [] as Array<() => void> };
    let refused: unknown;
    try {
      budget.reservationFor(other).reach(41);
    } catch (err) {
      refused = err;
    }
    expect(isTiffinError(refused) && refused.code).toBe('BODY_BUDGET_FULL');
    expect(budget.held).toBe(60);

    for (const close of call.onClose) close();
    expect(budget.held).toBe(0);
    // A closed call's reservation takes no more bytes.
    expect(() => first.reach(80)).toThrow(/over/);
    budget.reservationFor(other).reach(41);
    expect(budget.held).toBe(41);
  });
});
