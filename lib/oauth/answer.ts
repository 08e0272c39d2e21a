// What an authorization server answered, as the OAuth core hands it on: every status, the body read leniently.
export interface OAuthAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The JSON object of the body, when it was one. */
  json: Record<string, unknown> | undefined;
  /** The first characters of a body that was not a JSON object (for messages). */
  text: string;
  url: string;
}
