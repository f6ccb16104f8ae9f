/**
 * Lets a resubscribe stream end when its client hangs up. The SDK's
 * resubscribe listens on the task's event bus and checks for nothing else:
 * while the task is paused for an approval it sends nothing, possibly for
 * good, and a stream whose client had gone stayed subscribed (its queue, the
 * request and response objects) until the task moved on — each resubscribe
 * and hang-up kept one more. So a resubscribe gets, instead of the task's
 * bus, a view of it that forwards everything and remembers the listeners
 * added through it; when the request's client hangs up, hangUp(context)
 * tells those listeners the bus finished, and only they stop: the turn and
 * other subscribers carry on.
 */
import type { AgentExecutionEvent, EventListener, ExecutionEventBus, ExecutionEventName, FinishedListener, ServerCallContext } from '@a2a-js/sdk/server';
import { DefaultExecutionEventBusManager } from '../../vendor/a2a.ts';

type Listener = EventListener | FinishedListener;

class BusView implements ExecutionEventBus {
  private readonly added: [ExecutionEventName, Listener][] = [];

  constructor(private readonly bus: ExecutionEventBus) {}

  publish(event: AgentExecutionEvent): void {
    this.bus.publish(event);
  }

  finished(): void {
    this.bus.finished();
  }

  on(eventName: ExecutionEventName, listener: Listener): this {
    this.bus.on(eventName as 'event', listener as EventListener);
    this.added.push([eventName, listener]);
    return this;
  }

  off(eventName: ExecutionEventName, listener: Listener): this {
    this.bus.off(eventName as 'event', listener as EventListener);
    const index = this.added.findIndex(([name, l]) => name === eventName && l === listener);
    if (index >= 0) this.added.splice(index, 1);
    return this;
  }

  once(eventName: ExecutionEventName, listener: Listener): this {
    this.bus.once(eventName as 'event', listener as EventListener);
    return this;
  }

  removeAllListeners(eventName?: ExecutionEventName): this {
    for (const [name, listener] of [...this.added]) if (!eventName || name === eventName) this.off(name, listener);
    return this;
  }

  /** What listened through this view is told the bus finished, then taken off it. */
  end(): void {
    for (const [name, listener] of [...this.added]) if (name === 'finished') (listener as FinishedListener)();
    this.removeAllListeners();
  }
}

export class SubscriberBuses extends DefaultExecutionEventBusManager {
  private readonly views = new WeakMap<object, BusView[]>();

  override getByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    const bus = super.getByTaskId(taskId, context);
    if (!bus || !context) return bus;
    const view = new BusView(bus);
    this.views.set(context, [...(this.views.get(context) ?? []), view]);
    return view;
  }

  /** The request with this call context lost its client: its subscriptions end. */
  hangUp(context: object): void {
    for (const view of this.views.get(context) ?? []) view.end();
    this.views.delete(context);
  }
}
