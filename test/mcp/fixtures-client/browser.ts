/**
 * The person at the browser, as an HTTP form-poster: follows the authorization URL's redirects with a cookie jar,
 * fills oidc-provider's development sign-in form (login `dev`, any password) and submits its consent form, or fills
 * `gantry dev oauth`'s login and consent page (username `dev`, password `dev`, Allow or Deny), and — when
 * the authorization server redirects to the loopback callback — delivers that redirect, optionally changed by the test
 * (a tampered `state` or `iss`) or denied (the interaction's abort link: `error=access_denied`).
 */
export interface BrowserRun {
  /** The pages passed through (their titles), in order. */
  pages: string[];
  /** The callback URL the authorization server redirected to, before any tampering. */
  callbackUrl: string;
  /** What the loopback callback answered the browser. */
  callbackStatus: number;
  callbackPage: string;
}

export interface BrowserOptions {
  /** Changes the callback URL before it is delivered (a forged redirect). */
  tamper?: (url: URL) => void;
  /** Aborts at the first interaction page instead of signing in. */
  deny?: boolean;
}

export class FormBrowser {
  readonly cookies = new Map<string, string>();
  readonly runs: BrowserRun[] = [];

  async #get(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Runs the authorization from `authorizationUrl` to the delivered callback. */
  async authorize(authorizationUrl: string, options: BrowserOptions = {}): Promise<BrowserRun> {
    const pages: string[] = [];
    let url = authorizationUrl;
    let init: RequestInit = {};
    const callbackOrigin = new URL(new URL(authorizationUrl).searchParams.get('redirect_uri') ?? 'http://127.0.0.1/').origin;
    for (let step = 0; step < 20; step += 1) {
      if (new URL(url).origin === callbackOrigin) {
        const callback = new URL(url);
        options.tamper?.(callback);
        const answer = await fetch(callback, { redirect: 'manual' });
        const run = { pages, callbackUrl: url, callbackStatus: answer.status, callbackPage: await answer.text() };
        this.runs.push(run);
        return run;
      }
      const response = await this.#get(url, init);
      init = {};
      if (response.status >= 300 && response.status < 400) {
        await response.arrayBuffer();
        url = new URL(response.headers.get('location')!, url).toString();
        continue;
      }
      const html = await response.text();
      if (response.status !== 200) throw new Error(`the authorization server answered ${response.status} at ${url}: ${html.slice(0, 500)}`);
      pages.push(/<title>([^<]*)<\/title>/i.exec(html)?.[1] ?? '(untitled)');
      const abort = /href="([^"]*\/abort)"/.exec(html)?.[1];
      if (options.deny && abort) {
        url = new URL(abort, url).toString();
        continue;
      }
      const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
      if (!form) throw new Error(`no form on the page at ${url}: ${html.slice(0, 500)}`);
      const fields = new URLSearchParams();
      for (const input of form[2]!.matchAll(/<input([^>]*)>/gi)) {
        const name = /name="([^"]*)"/.exec(input[1]!)?.[1];
        if (!name) continue;
        const value = /value="([^"]*)"/.exec(input[1]!)?.[1] ?? '';
        fields.set(name, name === 'login' || name === 'username' ? 'dev' : name === 'password' ? 'dev' : value);
      }
      // A form with Allow and Deny buttons (gantry dev oauth): the button pressed is a field too.
      const decision = [...form[2]!.matchAll(/<button[^>]*name="([^"]+)"[^>]*value="([^"]+)"/gi)].map((m) => ({ name: m[1]!, value: m[2]! }));
      const pressed = decision.find((b) => b.value === (options.deny ? 'deny' : 'allow'));
      if (options.deny && !pressed) throw new Error(`no way to deny on ${url}`);
      if (pressed) fields.set(pressed.name, pressed.value);
      url = new URL(form[1]!.replace(/&amp;/g, '&'), url).toString();
      init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    }
    throw new Error(`the authorization did not reach the callback; pages: ${pages.join(' → ')}`);
  }
}
