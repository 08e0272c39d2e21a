// What every server that calls out (webhooks, security events) checks of an address it is given: an absolute URL whose
// scheme is http or https. The message saying so is the server's.

/** The URL `text` names, if it is an absolute http: or https: URL. */
export function httpUrl(text: string): URL | undefined {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : undefined;
}
