// The one failure type of the dev servers: a status, a message and headers. The kit knows no protocol, so it never
// renders one; each server renders its own failures in its own wire format (the secrets server's `{errors: […]}`,
// the storage and page-analysis APIs' `{error: {code, message, errors}}`, the platform's `{message,
// documentation_url}`, the authorization server's `{error, error_description}`), usually from a subclass that adds
// the fields that format needs.

/** A request that ends in an HTTP error status; thrown from anywhere in a handler up to the server's dispatcher. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}
