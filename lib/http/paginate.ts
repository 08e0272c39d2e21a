/** Paged lists in got's pagination terms, each page one `request` of the core. */
import { parseLinkHeader } from 'got';
import { expectFunction, expectObject } from '../arguments.js';
import { redactUrl } from '../redact.js';
import { ProtocolError } from './errors.js';
import type { HttpResponse, PaginateOptions, RequestOptions } from './types.js';

const defaultRequestLimit = 10_000;

/** got's default paging: the `Link` header's rel="next", resolved against the page's URL; false without one. */
export function nextLink({ response }: { response: HttpResponse<unknown> }): Partial<RequestOptions> | false {
  const given = response.headers.link;
  const header = Array.isArray(given) ? given.join(', ') : given;
  if (!header?.trim()) return false;
  // got's parser and URL throw plain Errors; a server's broken header is its protocol error, never a silent last page.
  const malformed = () => new ProtocolError(`the Link header of ${redactUrl(response.url)} is malformed, so its next page cannot be found`);
  let links: ReturnType<typeof parseLinkHeader>;
  try {
    links = parseLinkHeader(header);
  } catch {
    throw malformed();
  }
  const next = links.find((link) => link.parameters.rel?.replace(/"/g, '').split(/\s+/).includes('next'));
  if (!next) return false;
  if (!URL.canParse(next.reference, response.url)) throw malformed();
  return { url: new URL(next.reference, response.url), searchParams: undefined };
}

/** The items of a paged list, page after page, each page fetched by `request`. */
export async function* paginate<T>(
  request: (options: RequestOptions) => Promise<HttpResponse<unknown>>,
  resolveUrl: (url: string | URL) => URL,
  options: PaginateOptions<T>,
): AsyncGenerator<T> {
  expectFunction('paginate', 'request', request, "a function sending one page's request");
  expectFunction('paginate', 'resolveUrl', resolveUrl, 'a function resolving a URL');
  expectObject('paginate', 'options', options, 'an object: { url, transform, paginate?, countLimit?, requestLimit? }');
  expectFunction('paginate', 'options.transform', options.transform, "a function taking a page's items");
  const { transform, paginate: nextPage = nextLink, countLimit = Number.POSITIVE_INFINITY, requestLimit = defaultRequestLimit, ...first } = options;
  let current: RequestOptions = first;
  let count = 0;
  for (let page = 0; page < requestLimit; page += 1) {
    const response = await request(current);
    const currentItems = transform(response);
    for (const item of currentItems) {
      if (count >= countLimit) return;
      count += 1;
      yield item;
    }
    if (count >= countLimit) return;
    const next = nextPage({ response, currentItems, request: current });
    if (next === false) return;
    current = { ...current, ...next };
  }
  throw new ProtocolError(
    `${(first.method ?? 'GET').toUpperCase()} ${redactUrl(resolveUrl(first.url))}: more than ${requestLimit} pages; the server's paging never ends`,
  );
}
