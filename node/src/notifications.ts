/**
 * Notifications: a CLIENT span where one is sent, a SERVER span where one is received, named by
 * its method, with no outcome, no status and no duration point (a notification has no answer).
 * Progress and log messages only with `traceProgressAndLogs` (they come by the hundred).
 *
 * Parents: a sent `notifications/cancelled` is the child of the request it cancels; any other sent
 * notification of the current span. A received one is the child of the sender's context in
 * `_meta`, else of the request it concerns (a cancel: the request being handled; progress: the
 * request sent whose id is its token), else of the current context.
 */
import { context, trace, type Context } from '@opentelemetry/api';
import { requestAttributes, requestOf, tracedNotification } from './attributes.js';
import type { Settings } from './config.js';
import type { Message, Protocol, SdkFacts } from './facts.js';
import { field } from './fields.js';
import type { Lifecycle } from './lifecycle.js';
import { extracted, withContext } from './propagation.js';
import { reportOnce } from './safety.js';
import { METHOD_CANCELLED, METHOD_PROGRESS } from './semconv.js';
import type { Sessions } from './sessions.js';

export class NotificationSide {
  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly settings: () => Settings,
    private readonly sessions: Sessions,
  ) {}

  /** `message` is being sent on `protocol`: its span, and the copy to send (with `_meta`), if traced. */
  sent(facts: SdkFacts, protocol: Protocol, message: Message): Message | undefined {
    const settings = this.settings();
    if (!tracedNotification(message.method, settings)) return undefined;
    const request = requestOf(message.method, message.params, settings);
    const concerned =
      request.method === METHOD_CANCELLED ? this.sentRequest(protocol, field(message.params, 'requestId')) : undefined;
    const parent = concerned ?? context.active();
    const attributes = {
      ...requestAttributes(request, settings, this.sessions.facts(facts, protocol, 'client')),
      ...facts.transportAttributes(protocol, 'client'),
    };
    const span = this.lifecycle.notification('client', request, attributes, parent);
    span.end();
    return settings.propagate ? withContext(message, trace.setSpan(context.active(), span)) : undefined;
  }

  /** `message` arrived on `protocol`; `dispatch` runs the SDK's own handling of it. */
  received(facts: SdkFacts, protocol: Protocol, message: Message, extra: unknown, dispatch: () => void): void {
    const settings = this.settings();
    if (!tracedNotification(message.method, settings)) {
      dispatch();
      return;
    }
    let span;
    let parent: Context = context.active();
    try {
      const request = requestOf(message.method, message.params, settings);
      const remote = settings.trustRemoteContext ? extracted(field(message.params, '_meta')) : undefined;
      parent = remote ?? this.concerned(protocol, request.method, message.params) ?? parent;
      const attributes = {
        ...requestAttributes(request, settings, this.sessions.facts(facts, protocol, 'server')),
        ...facts.transportAttributes(protocol, 'server', extra),
      };
      span = this.lifecycle.notification('server', request, attributes, parent);
    } catch (error) {
      reportOnce('could not start a notification span', error);
      dispatch();
      return;
    }
    try {
      context.with(trace.setSpan(parent, span), dispatch);
    } finally {
      span.end();
    }
  }

  /** The context of the request a received notification concerns, if it is in flight here. */
  private concerned(protocol: Protocol, method: string, params: unknown): Context | undefined {
    if (method === METHOD_CANCELLED) {
      const call = this.sessions.of(protocol).handling.get(field(params, 'requestId'));
      return call === undefined ? undefined : trace.setSpan(context.active(), call.span);
    }
    if (method === METHOD_PROGRESS) return this.sentRequest(protocol, field(params, 'progressToken'));
    return undefined;
  }

  /** The context of the request `protocol` sent with JSON-RPC id `id`, if in flight. */
  private sentRequest(protocol: Protocol, id: unknown): Context | undefined {
    for (const call of this.sessions.inFlight(protocol)) {
      if (call.requestId !== undefined && sameId(call.requestId, id)) {
        return trace.setSpan(context.active(), call.span);
      }
    }
    return undefined;
  }
}

/** A JSON-RPC id and a cancel's or progress token's reference to it (a peer may send 3 for "3"). */
function sameId(id: unknown, reference: unknown): boolean {
  return id === reference || ((typeof reference === 'string' || typeof reference === 'number') && `${id as string | number}` === `${reference}`);
}
