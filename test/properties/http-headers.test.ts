import assert from 'node:assert/strict';
import { nextLink } from '../../lib/http/paginate.js';
import { parseRetryAfter } from '../../lib/http/retry.js';
import type { HttpResponse } from '../../lib/http/types.js';
import { readRateLimitHeaders } from '../../lib/platform/throttle.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const now = Date.UTC(2026, 0, 1);
const digits = fc.stringMatching(/^\d{1,400}$/);
const retryAfter = anyText(
  fc.oneof(
    digits,
    fc.constant('9'.repeat(400)),
    fc.integer({ min: -1e3, max: 1e6 }).map(String),
    fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toUTCString()),
    fromAlphabet(['1', '0', ' ', '.', '-', '+', 'e', 'Wed, 21 Oct 2015 07:28:00 GMT', 'GMT', 'Infinity', '0x1'], 6),
  ),
);
const number = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('', ' ', '1e400', '-1', '0x10', 'NaN', 'Infinity', '5000 ', '1.5'),
  fc.string({ maxLength: 6 }),
);
const linkUrl = fc.constantFrom(
  'https://api.example/items?page=2',
  '/items?page=3',
  '?page=4',
  '//other.example/x',
  'http://[::1',
  'https://a b/',
  '',
  'javascript:void(0)',
  '%zz',
);
const linkHeader = anyText(
  fc
    .array(
      fc.tuple(
        linkUrl,
        fc.constantFrom('rel="next"', 'rel=next', 'rel="prev next"', 'rel="last"', 'rel=', 'title="a, b"', ''),
        fc.constantFrom('<', ''),
        fc.constantFrom('>', ''),
      ),
      { maxLength: 3 },
    )
    .map((links) => links.map(([url, rel, open, close]) => `${open}${url}${close}${rel ? `; ${rel}` : ''}`).join(', ')),
);
const response = (link: string | string[] | undefined, url = 'https://api.example/items?page=1') =>
  ({ status: 200, headers: link === undefined ? {} : { link }, body: [], url, redirectUrls: [], attempts: 1 }) as unknown as HttpResponse<unknown>;

describe('PROP-HTTP-HEADERS: Retry-After, the rate-limit headers and the Link header of paged lists', () => {
  it('PROP-HTTP-HEADERS: parseRetryAfter answers a finite wait of 0 or more milliseconds, or undefined, for any value (RATE-HDR-RETRY-AFTER)', () => {
    check(
      fc.oneof(retryAfter, fc.array(retryAfter, { maxLength: 2 })),
      (value) => {
        const ms = parseRetryAfter(value, now);
        if (ms !== undefined) assert.ok(Number.isFinite(ms) && ms >= 0, `${String(value).slice(0, 40)} → ${ms}`);
      },
      800,
    );
  });

  it('PROP-HTTP-HEADERS: delta-seconds and HTTP dates read back as the wait they print (RATE-HDR-RETRY-AFTER)', () => {
    check(fc.tuple(fc.nat({ max: 1e7 }), fc.integer({ min: 0, max: 1e7 })), ([seconds, ahead]) => {
      assert.equal(parseRetryAfter(String(seconds), now), seconds * 1000);
      assert.equal(parseRetryAfter(new Date(now + ahead * 1000).toUTCString(), now), ahead * 1000);
    });
  });

  it('PROP-HTTP-HEADERS: readRateLimitHeaders answers finite numbers or nothing, whatever the headers (RATE-HDR-LIMIT, RATE-HDR-REMAINING, RATE-HDR-USED, RATE-HDR-RESET, RATE-HDR-RESOURCE)', () => {
    const headers = fc.record(
      {
        'x-ratelimit-limit': number,
        'x-ratelimit-remaining': fc.oneof(number, fc.array(number, { maxLength: 2 })),
        'x-ratelimit-used': number,
        'x-ratelimit-reset': number,
        'x-ratelimit-resource': fc.constantFrom('core', 'search', ''),
      },
      { requiredKeys: [] },
    );
    check(
      headers,
      (given) => {
        const seen = readRateLimitHeaders(given);
        if (!seen) return;
        for (const n of [seen.limit, seen.remaining, seen.reset, ...(seen.used === undefined ? [] : [seen.used])])
          assert.ok(Number.isFinite(n), JSON.stringify(seen));
      },
      500,
    );
  });

  it("PROP-HTTP-HEADERS: nextLink answers the next page's URL, false, or a GantryError, whatever the Link header (REG-META-NEXT-URL)", () => {
    check(
      fc.oneof(linkHeader, fc.array(linkHeader, { maxLength: 2 })),
      (link) => {
        const answer = typed(() => nextLink({ response: response(link) }));
        if (answer.ok && answer.value !== false) assert.ok(answer.value.url instanceof URL);
      },
      800,
    );
  });

  it('PROP-HTTP-HEADERS: a Link header printed from URLs and rels gives back the first rel="next" URL, resolved against the page', () => {
    const page = fc.nat({ max: 99 }).map((n) => `https://api.example/items?page=${n}`);
    check(fc.array(fc.tuple(page, fc.constantFrom('next', 'prev', 'last', 'first next')), { maxLength: 4 }), (links) => {
      const answer = nextLink({ response: response(links.map(([url, rel]) => `<${url}>; rel="${rel}"`).join(', ')) });
      const expected = links.find(([, rel]) => rel.split(' ').includes('next'));
      assert.equal(answer === false ? undefined : String(answer.url), expected?.[0]);
    });
  });
});
