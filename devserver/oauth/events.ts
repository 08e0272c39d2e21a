// Cross-account protection security events (DEV-RISC-*): Security Event Tokens (RFC 8417, `typ: secevent+jwt`,
// RS256 with the key at jwks_uri) pushed to each client's receivers by RFC 8935 (POST application/secevent+jwt,
// 202 expected). Google's RISC shapes: an `iss_sub` subject, and for token-revoked an `oauth_token` subject.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { tokenIdentifier, type SigningKey } from './jwt.js';
import { EVENT_ACCOUNT_DISABLED, EVENT_SESSIONS_REVOKED, EVENT_TOKEN_REVOKED } from './options.js';
import type { Client, RefreshToken, User } from './store.js';

export interface SecurityEventDelivery {
  jti: string;
  clientId: string;
  url: string;
  event: string;
  sub: string;
  /** The receiver's status, or 0 when it could not be reached. */
  status: number;
  /** Whether the receiver answered 202 Accepted (RFC 8935 §2.2). */
  accepted: boolean;
  error?: string;
  at: string;
}

const PUSH_TIMEOUT_MS = 10_000;

export class SecurityEvents {
  private deliveries: SecurityEventDelivery[] = [];
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly key: SigningKey,
    private readonly issuer: () => string,
  ) {}

  sessionsRevoked(user: User, clients: Client[]): void {
    for (const client of clients) this.push(client, user, EVENT_SESSIONS_REVOKED, { subject: this.subject(user) });
  }

  accountDisabled(user: User, clients: Client[], reason?: string): void {
    for (const client of clients) this.push(client, user, EVENT_ACCOUNT_DISABLED, { subject: this.subject(user), ...(reason ? { reason } : {}) });
  }

  /** One event per refresh token, to the client it was issued to. */
  tokenRevoked(user: User, client: Client, token: RefreshToken): void {
    this.push(client, user, EVENT_TOKEN_REVOKED, {
      subject: {
        subject_type: 'oauth_token',
        token_type: 'refresh_token',
        token_identifier_alg: 'hash_base64_sha512_sha512',
        token: tokenIdentifier(token.value),
      },
    });
  }

  list(): SecurityEventDelivery[] {
    return [...this.deliveries];
  }

  clear(): void {
    this.deliveries = [];
  }

  /** Resolves once no push is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private subject(user: User) {
    return { subject_type: 'iss_sub', iss: this.issuer(), sub: user.sub };
  }

  private push(client: Client, user: User, event: string, payload: Record<string, unknown>): void {
    for (const url of client.receivers) {
      const jti = randomUUID();
      const set = this.key.sign({ iss: this.issuer(), aud: client.id, iat: Math.floor(Date.now() / 1000), jti, events: { [event]: payload } }, 'secevent+jwt');
      const delivery: SecurityEventDelivery = { jti, clientId: client.id, url, event, sub: user.sub, status: 0, accepted: false, at: new Date().toISOString() };
      this.deliveries.push(delivery);
      if (this.deliveries.length > 1000) this.deliveries.shift();
      const pending = post(url, set).then(
        (status) => {
          delivery.status = status;
          delivery.accepted = status === 202;
        },
        (error: unknown) => {
          delivery.error = (error as Error).message;
        },
      );
      this.inFlight.add(pending);
      void pending.finally(() => this.inFlight.delete(pending));
    }
  }
}

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = (target.protocol === 'https:' ? https : http).request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/secevent+jwt', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: PUSH_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${PUSH_TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
