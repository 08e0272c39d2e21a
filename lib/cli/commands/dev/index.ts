import type { Command } from 'commander';
import { devOAuthDialect, devServers } from '../../../../devserver/index.js';
import type { CliContext } from '../../context.js';
import { checkDevHost, startDevServers, untilInterrupted } from '../../serving.js';
import { registerDevRegistry } from './registry.js';
import { registerDevSecrets } from './secrets.js';
import { registerDevPlatform } from './platform.js';
import { registerDevOAuth } from './oauth.js';
import { registerDevStorage } from './storage.js';
import { exportLine } from '../../shell-quote.js';

export function register(program: Command, context: CliContext): void {
  const dev = program
    .command('dev')
    .description('start the embedded dev servers on 127.0.0.1 and print their addresses and credentials (Ctrl-C stops them)')
    .option('--host <address>', 'the loopback address to listen on', '127.0.0.1')
    .option(
      '--oauth-dialect <dialect>',
      "the authorization server's dialect: google (verification_url; Gantry's default) or rfc8628 (verification_uri, for RFC 8628 clients such as openid-client); default GANTRY_DEV_OAUTH_DIALECT or google",
    )
    .action(async (options: { host: string; oauthDialect?: string }, command: Command) => {
      const { json } = context.globals(command);
      checkDevHost(options.host);
      const oauthDialect = devOAuthDialect({ name: '--oauth-dialect', value: options.oauthDialect });
      const running = await startDevServers({ host: options.host, oauthDialect });
      // The handlers go in before the first line is printed: whoever reads that line may stop the server at once.
      const interrupted = untilInterrupted(running.stop);
      if (json) {
        context.out.json(running.servers.map(({ name, url, credentials, env }) => ({ name, url, credentials, ...(env ? { env } : {}) })));
      } else {
        context.out.table(running.servers, [
          { header: 'server', value: (s) => s.name },
          { header: 'address', value: (s) => s.url },
          {
            header: 'credentials',
            value: (s) =>
              Object.entries(s.credentials)
                .map(([k, v]) => `${k}=${v}`)
                .join(' '),
          },
        ]);
        const exports = running.servers.filter((s) => s.env && Object.keys(s.env).length > 0);
        if (exports.length > 0) context.out.line();
        for (const server of exports) context.out.line(exportLine(server.env!));
        context.out.line();
        if (running.servers.some((s) => s.name === 'oauth'))
          context.out.line("Agents: after the export lines, `gantry mcp serve` serves Gantry's tools behind this authorization server (docs/mcp.md).");
        context.out.line('Press Ctrl-C to stop.');
      }
      await interrupted;
    });
  registerDevRegistry(dev, context);
  registerDevSecrets(dev, context);
  registerDevPlatform(dev, context);
  registerDevOAuth(dev, context);
  registerDevStorage(dev, context);
  const alone = dev.commands.map((command) => `gantry dev ${command.name()}`);
  dev.addHelpText('after', `\nServers: ${devServers.map((s) => s.name).join(', ')}. Started alone, with their own options: ${alone.join(', ')}.`);
}
