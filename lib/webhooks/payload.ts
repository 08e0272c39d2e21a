// Checking a delivery's payload against the event catalogue: a known event missing a required top-level property,
// or carrying one of the wrong type, is refused naming the properties (never quoting their values); an event outside
// the catalogue is accepted as unknown; a `sender` that is the `ghost` placeholder is surfaced (HOOK-SENDER-GHOST).
import { expectString } from '../arguments.js';
import { eventNamed, type PropertyType, type WebhookProperty } from './catalogue.js';

export type PayloadCheck =
  | {
      ok: true;
      /** The event is in the catalogue (its required properties were checked). */
      known: boolean;
      /** The payload's `action`, when it is a string. */
      action: string | undefined;
      /** `sender.login` is `ghost`: the placeholder for "no user could be resolved", never a person. */
      ghostSender: boolean;
    }
  | {
      ok: false;
      /** Required properties that are absent, in the catalogue's order. */
      missing: string[];
      /** Properties present with a type (or value) the catalogue does not allow. */
      wrongType: Array<{ property: string; expected: string }>;
      /** One line naming the event and the properties; no value from the payload. */
      message: string;
    };

/** The login of the placeholder user the platform sends as `sender` when no user can be resolved. */
export const ghostLogin = 'ghost';

/** The name `wrongType` uses for the payload itself when it is not a JSON object. */
export const wholePayload = '(payload)';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function hasType(value: unknown, type: PropertyType): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'object or null':
      return value === null || isObject(value);
    case 'string':
      return typeof value === 'string';
    case 'string or null':
      return value === null || typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array of objects':
      return Array.isArray(value) && value.every(isObject);
    case 'array of strings or null':
      return value === null || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  }
}

/** What a property must be, in words, or undefined when the value is fine. */
function violation(property: WebhookProperty, value: unknown): string | undefined {
  if (property.type === null) return undefined;
  if (!hasType(value, property.type)) return property.maxItems === undefined ? property.type : `${property.type} (at most ${property.maxItems})`;
  if (property.maxItems !== undefined && Array.isArray(value) && value.length > property.maxItems) return `${property.type} (at most ${property.maxItems})`;
  if (property.oneOf !== undefined && !property.oneOf.includes(value as string)) return `one of ${property.oneOf.join(', ')}`;
  return undefined;
}

function isGhost(payload: Record<string, unknown>): boolean {
  const sender = Object.hasOwn(payload, 'sender') ? payload.sender : undefined;
  return isObject(sender) && sender.login === ghostLogin;
}

/**
 * Checks a delivery's payload (the parsed JSON body) for the event named in `X-Platform-Event`. A known event's
 * required top-level properties must be present — the common ones with this event's requiredness (HOOK-REQ-*), its
 * own (HOOK-EV-*), and those required only for some actions — and every property the catalogue types must have
 * that type. An unknown event is accepted with `known: false`. A payload that is not a JSON object is refused for
 * any event.
 */
export function checkPayload(event: string, payload: unknown): PayloadCheck {
  expectString('checkPayload', 'event', event, 'an event name such as "push"');
  const entry = eventNamed(event);
  const label = entry === undefined ? 'the delivery' : `a ${entry.name} delivery`;
  if (!isObject(payload)) {
    const wrongType = [{ property: wholePayload, expected: 'object' }];
    return { ok: false, missing: [], wrongType, message: `${label} was refused: its payload is not a JSON object` };
  }
  const action = Object.hasOwn(payload, 'action') && typeof payload.action === 'string' ? payload.action : undefined;
  const ghostSender = isGhost(payload);
  if (entry === undefined) return { ok: true, known: false, action, ghostSender };

  const missing: string[] = [];
  const wrongType: Array<{ property: string; expected: string }> = [];
  for (const property of entry.properties) {
    const present = Object.hasOwn(payload, property.name) && payload[property.name] !== undefined;
    if (!present) {
      const requiredNow = property.required || (action !== undefined && (property.requiredForActions?.includes(action) ?? false));
      if (requiredNow) missing.push(property.name);
      continue;
    }
    const expected = violation(property, payload[property.name]);
    if (expected !== undefined) wrongType.push({ property: property.name, expected });
  }
  if (missing.length === 0 && wrongType.length === 0) return { ok: true, known: true, action, ghostSender };

  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing the required ${missing.length === 1 ? 'property' : 'properties'} ${missing.join(', ')}`);
  if (wrongType.length > 0) parts.push(wrongType.map(({ property, expected }) => `${property} must be ${expected}`).join(', '));
  // Named only when it made a property required, and then in the catalogue's words, not the payload's.
  const byAction = entry.properties.find((p) => missing.includes(p.name) && !p.required)?.requiredForActions?.find((a) => a === action);
  const forAction = byAction === undefined ? '' : ` (action ${byAction})`;
  return { ok: false, missing, wrongType, message: `${label}${forAction} was refused: ${parts.join('; ')}` };
}
