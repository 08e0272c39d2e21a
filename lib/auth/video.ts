/**
 * The spec's example call (DEV-EP-VIDEO-CHANNELS): the signed-in person's channels, `GET {api_base}/video/v3/channels
 * ?part=snippet&mine=true`. The token goes in `Authorization: Bearer` (DEV-AUTH-ACCESS-TOKEN-TRANSPORT: query strings
 * are logged); the `access_token` query parameter only when asked, and the redactor masks it in every URL we print.
 */
import { bearerAuth, HttpError, toCredentials, type Credentials, type HttpClient } from '../http/index.js';
import { bothFaces } from '../errors.js';
import { DeviceLoginError } from './errors.js';

export interface Channel {
  id: string;
  title: string | undefined;
  customUrl: string | undefined;
}

/**
 * `access` is the token, or `Credentials` (a login's `{ token: getAccessToken, renew: refresh }`): a 401 then renews
 * it once and asks again (the core's `bearerAuth`).
 */
export async function listMyChannels(
  http: HttpClient,
  apiBase: string,
  access: string | Credentials,
  options: { tokenInQuery?: boolean; part?: string; signal?: AbortSignal } = {},
): Promise<Channel[]> {
  const hooks = bearerAuth(toCredentials(access), options.tokenInQuery ? { queryParameter: 'access_token' } : {});
  const url = `${apiBase.replace(/\/+$/, '')}/video/v3/channels`;
  try {
    const response = await http.request<{ items?: Array<{ id?: unknown; snippet?: { title?: unknown; customUrl?: unknown } }> }>({
      method: 'GET',
      url,
      searchParams: { part: options.part ?? 'snippet', mine: 'true' },
      hooks,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return (response.body?.items ?? []).map((item) => ({
      id: String(item.id ?? ''),
      title: typeof item.snippet?.title === 'string' ? item.snippet.title : undefined,
      customUrl: typeof item.snippet?.customUrl === 'string' ? item.snippet.customUrl : undefined,
    }));
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) {
      throw new DeviceLoginError(`the video API refused the access token (401): ${error.message}`, {
        code: 'AUTH_NOT_LOGGED_IN',
        status: 401,
        hint: 'run `gantry auth refresh`, or `gantry auth login` if the login was revoked',
        cause: error,
      });
    }
    if (error instanceof HttpError && error.status === 403) {
      throw new DeviceLoginError(`the video API refused the call (403): ${error.message}`, {
        code: 'AUTH_INVALID_SCOPE',
        status: 403,
        ...bothFaces(
          (how) => `log in with a video scope: ${how}`,
          "deviceLogin with resolveScopes(['openid', 'email', 'video.readonly'])",
          'gantry auth login --scope openid,email,video.readonly',
        ),
        cause: error,
      });
    }
    throw error;
  }
}
