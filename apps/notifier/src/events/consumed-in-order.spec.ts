import { ConsumedInOrder } from './consumed-in-order';

const first = (deliverySequence: number, streamSequence: number) => ({ deliverySequence, streamSequence, firstDelivery: true });
const again = (deliverySequence: number, streamSequence: number) => ({ deliverySequence, streamSequence, firstDelivery: false });

describe('ConsumedInOrder', () => {
  it('covers an unbroken run of first deliveries that starts at the horizon', () => {
    const order = new ConsumedInOrder();
    order.reached(9);
    expect(order.next(first(1, 10), false)).toBe(true);
    expect(order.next(first(2, 12), false)).toBe(true);
    expect(order.next(first(3, 13), false)).toBe(true);
  });

  it('covers what follows a push-config event only once it is applied', () => {
    const order = new ConsumedInOrder();
    const config = first(1, 10);
    order.reached(9);
    expect(order.next(config, true)).toBe(true);
    order.reached(9);
    expect(order.next(first(2, 11), false)).toBe(false);
    const applied = new ConsumedInOrder();
    applied.reached(9);
    applied.next(config, true);
    applied.appliedPushConfig(config);
    applied.reached(9);
    expect(applied.next(first(2, 11), false)).toBe(true);
  });

  it('covers nothing past a gap in the deliveries (another replica took one) until the horizon does', () => {
    const order = new ConsumedInOrder();
    order.reached(9);
    expect(order.next(first(1, 10), false)).toBe(true);
    order.reached(9);
    expect(order.next(first(3, 12), false)).toBe(false);
    order.reached(9);
    expect(order.next(first(4, 13), false)).toBe(false);
    order.reached(13);
    expect(order.next(first(5, 14), false)).toBe(true);
    expect(order.next(first(6, 15), false)).toBe(true);
  });

  it('does not start a run above the horizon, nor at the first message it handles', () => {
    const order = new ConsumedInOrder();
    order.reached(5);
    expect(order.next(first(7, 10), false)).toBe(false);
    order.reached(5);
    expect(order.next(first(8, 11), false)).toBe(false);
    const fresh = new ConsumedInOrder();
    fresh.reached(5);
    expect(fresh.next(first(1, 10), false)).toBe(false);
  });

  it('keeps a run across a redelivery of an event it covers, and covers a redelivery below what it covers', () => {
    const order = new ConsumedInOrder();
    order.reached(9);
    expect(order.next(first(1, 10), false)).toBe(true);
    expect(order.next(again(2, 8), false)).toBe(true);
    expect(order.next(first(3, 11), false)).toBe(true);
    expect(order.next(again(4, 20), false)).toBe(false);
  });

  it('starts a run again after a push-config event that could not be applied once the horizon passes it', () => {
    const order = new ConsumedInOrder();
    order.reached(9);
    expect(order.next(first(1, 10), true)).toBe(true);
    expect(order.next(first(2, 11), false)).toBe(false);
    order.reached(11);
    expect(order.next(first(3, 12), false)).toBe(true);
  });
});
