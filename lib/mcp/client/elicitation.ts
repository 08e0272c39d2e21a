/**
 * Elicitation (a server asking the person for input during a call): the capability is declared only when the caller
 * handles it. Gantry asks nobody: the two answers a program can give without a person are to decline, or to accept
 * with what the server's own schema offers as defaults (SEP-1034). The capability asks the SDK to apply defaults to a
 * handler's accepted form too.
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

export type ElicitationRequest = ElicitRequest['params'];
export type ElicitationHandler = (request: ElicitationRequest) => ElicitResult | Promise<ElicitResult>;

/** Declines every request. */
export const declineElicitation: ElicitationHandler = () => ({ action: 'decline' });

/**
 * Accepts a form whose every required field has a default, with those defaults; declines anything else (a URL to
 * visit, a required field only a person could fill in).
 */
export const acceptElicitationDefaults: ElicitationHandler = (request) => {
  if (request.mode === 'url' || !('requestedSchema' in request)) return { action: 'decline' };
  const { properties, required = [] } = request.requestedSchema;
  if (required.some((name) => properties[name]?.default === undefined)) return { action: 'decline' };
  const content = Object.fromEntries(
    Object.entries(properties).flatMap(([name, field]) => (field.default !== undefined ? [[name, field.default]] : [])),
  ) as NonNullable<ElicitResult['content']>;
  return { action: 'accept', content };
};
