import type { GateResult } from '../../../analysis/index.js';
import { gateResultKey } from './gate.js';
import { runningServer, type DemoStep } from './step.js';

const FOLDER_TITLE = 'gantry-demo-reports';

/**
 * The gate step's reports published to the embedded storage API with the login step's device-grant tokens (scope
 * storage.file), as `gantry gate --report-storage` does with a `gantry auth` login: the tokens are read from the 0600
 * file the login step wrote in the demo's work folder (profile demo) and refreshed there when due; the storage server
 * accepts them because the authorization server's tokeninfo gives them a storage scope. Never STORAGE_TOKEN: the
 * point is the login.
 */
export const publishStep: DemoStep = {
  name: 'publish',
  description: "publish the gate's reports to the embedded storage API with the device login's tokens, and list them back",
  async run({ servers, out, workDir, json, results }) {
    const baseUrl = runningServer(servers, 'storage', 'the embedded storage API').env?.STORAGE_BASE_URL;
    const oauth = runningServer(servers, 'oauth', 'the embedded authorization server');
    if (!baseUrl || !oauth.env?.GANTRY_AUTH_URL || !oauth.env.GANTRY_OAUTH_CLIENT_ID) throw new Error('the embedded servers do not say where they are');
    const login = results?.login as { error?: string } | undefined;
    if (!login || login.error !== undefined) throw new Error('the login step did not log in: there are no tokens to publish with');
    const gate = results?.gate as { [gateResultKey]?: GateResult } | undefined;
    const result = gate?.[gateResultKey];
    if (!result) throw new Error('the gate step produced no result to publish');

    const auth = await import('../../../auth/index.js');
    const { createStorageClient, FOLDER_MIME } = await import('../../../storage/index.js');
    const analysis = await import('../../../analysis/index.js');
    const { store } = await auth.openTokenStore('file', { configDir: workDir, profile: 'demo', insecureStorage: true });
    const key = { authUrl: auth.checkAuthUrl(oauth.env.GANTRY_AUTH_URL), clientId: oauth.env.GANTRY_OAUTH_CLIENT_ID, profile: 'demo' };
    const session = new auth.AuthSession({ store, key, clientSecret: oauth.env.GANTRY_OAUTH_CLIENT_SECRET });
    const client = createStorageClient({ baseUrl, token: session });
    try {
      const folder = await client.files.insert({ requestBody: { title: FOLDER_TITLE, mimeType: FOLDER_MIME } });
      const folderId = folder.id!;
      if (!json) out.line(`  created the folder ${FOLDER_TITLE} (${folderId}) on ${baseUrl} with the device login's access token (profile demo)`);
      const summary = await analysis.publishReportsToStorage(result, folderId, { client });
      const listed = [];
      for await (const file of client.files.list.all({
        q: `'${folderId}' in parents and trashed = false`,
        fields: 'items(id,title,mimeType,fileSize,alternateLink),nextPageToken',
      }))
        listed.push(file);
      listed.sort((a, b) => String(a.title).localeCompare(String(b.title)));
      if (!json) {
        out.line(`  published ${summary.storage.files.length} files; the folder lists:`);
        const width = Math.max(...listed.map((file) => String(file.title).length));
        for (const file of listed)
          out.line(`    ${String(file.title).padEnd(width)}  ${String(file.fileSize ?? '').padStart(8)} B  ${file.alternateLink ?? ''}`);
        out.line(`  report: ${summary.storage.reportUrl ?? '(the service gave no link)'}`);
        out.line('  try: gantry dev, then in another terminal, paste the export line it prints and: gantry storage mkdir reports (note the id it prints),');
        out.line(
          "       gantry gate <your page's URL> --report-storage <folderId>, then gantry storage ls <folderId> (or gantry auth login instead of STORAGE_TOKEN)",
        );
      }
      return {
        folderId,
        folder: FOLDER_TITLE,
        reportUrl: summary.storage.reportUrl,
        files: listed.map((file) => ({ title: file.title, id: file.id, mimeType: file.mimeType, link: file.alternateLink ?? null })),
      };
    } finally {
      client.close();
      session.close();
    }
  },
};
