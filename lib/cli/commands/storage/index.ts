/**
 * `gantry storage`: files in the storage API v2 (Drive v2 as /storage/v2) — list, upload (resumable above 5 MiB, and
 * resumable by a later run after the process died), download (resumed from what an earlier run received), export,
 * folders, moves, the trash, permanent deletes, sharing, revisions, the change log and its push notifications.
 * The actions and lib/storage load when a command runs, so `gantry --help` loads none of it.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { connectionOptions, STORAGE_AUTH_HELP, STORAGE_EXIT_HELP } from './client.js';

const actions = () => import('./actions.js');
const transfers = () => import('./transfer.js');
const changes = () => import('./changes.js');

const footer = `\n${STORAGE_AUTH_HELP}\n\n${STORAGE_EXIT_HELP}`;

export function register(program: Command, context: CliContext): void {
  const storage = program
    .command('storage')
    .description('files in the storage API: ls, put (resumable), get, export, mkdir, mv, trash, rm, share, revisions, changes, about')
    .addHelpText(
      'after',
      `
Examples:
  gantry storage ls                                   the root folder: id, title (folders end in /), type, size, modified
  gantry storage put report.pdf --parent <folderId>   upload; above 5 MiB resumable, and Ctrl-C or a crash can be resumed:
  gantry storage put --resume big.tar                 go on with the interrupted upload of big.tar
  gantry storage get <id> -o out/                     download (a rerun goes on from the bytes already received)
  gantry storage get <id> -o - | tar tz               to stdout
  gantry storage changes --watch                      print changes as the service announces them, until Ctrl-C
Every command takes --json (one JSON document; ls and changes print one JSON document per line).
${footer}`,
    );

  connectionOptions(storage.command('ls [folder]'))
    .description('list a folder (default the root): id, title (folders end in /), mimeType, size, modified — folders first, then by title')
    .option('-q, --query <q>', 'a files.list query (Drive v2 syntax), within [folder] if one is given, else everywhere, e.g. "title contains \'report\'"')
    .option('--all', 'every file, page after page (default: the first 100)')
    .option('--max <n>', 'at most n files (default 100)')
    .option('--trashed', 'the trash instead (within [folder] if given)')
    .addHelpText(
      'after',
      `
Examples:
  gantry storage ls
  gantry storage ls <folderId> --all
  gantry storage ls -q "mimeType = 'application/pdf'" --max 20
  gantry storage ls --all --json | jq -r .title          one file resource per line
  gantry storage ls --all | head -1                      stops listing when the reader is done
${footer}`,
    )
    .action(async (folder: string | undefined, flags, command: Command) => (await actions()).lsAction(folder, flags, command, context));

  connectionOptions(storage.command('put <file>'))
    .description(
      'upload a file (files.insert, or a new revision with --replace): media or multipart up to 5 MiB, resumable above, its session kept so that --resume goes on after a crash',
    )
    .option('--parent <id>', 'the folder to put it in (default the root)')
    .option('--name <title>', "its title (default the file's name)")
    .option('--mime <type>', "its media type (default: the one the file's extension names, else application/octet-stream)")
    .option('--replace <fileId>', 'upload a new revision of this file instead of a new file')
    .option('--resume', 'go on with the interrupted upload of <file> from the bytes the service has')
    .option('--restart', 'discard the interrupted upload of <file> and start over')
    .addHelpText(
      'after',
      `
Above 5 MiB the upload is resumable: the session is kept in $XDG_STATE_HOME/gantry/storage-uploads/ (else
~/.local/state/gantry/storage-uploads/, 0600: the session URI lets its holder send bytes) until the upload is done.
After Ctrl-C, a crash or a dead network, \`put --resume <file>\` asks the service what it has and sends the rest; a file
that changed since is refused. While an upload of the same file to the same service waits, \`put\` says so and
\`put --restart\` starts over. A file that changes while it is being uploaded stops the upload (exit 1): nothing is
stored, and the next put starts over (a change seen only after the last byte moves the new file to the trash).

Examples:
  gantry storage put build/site.tgz --parent <folderId>
  gantry storage put report.html --name "Report $(date +%F).html" --mime text/html
  gantry storage put big.iso              (Ctrl-C, a crash …)
  gantry storage put --resume big.iso
  gantry storage put notes.txt --replace <fileId>
${footer}`,
    )
    .action(async (file: string, flags, command: Command) => (await transfers()).putAction(file, flags, command, context));

  connectionOptions(storage.command('get <id>'))
    .description("download a file's content (alt=media), resumed from the bytes an earlier run received, md5-checked, written only when complete")
    .option('-o, --output <file>', "where to: a file, a folder (the file's title inside it), or - for stdout (default: its title in the current folder)")
    .option('--revision <id>', "a revision's content (gantry storage revisions lists them)")
    .addHelpText(
      'after',
      `
The bytes go to .<name>.<key>.gantry-download beside the target and are renamed onto it once complete and md5-checked;
after a break (Ctrl-C, a crash, the network), the same command goes on from there with Range. To stdout (-o -) a break
is resumed within the run; a reader that goes away (| head -c) stops it quietly.

Examples:
  gantry storage get <id>
  gantry storage get <id> -o backups/
  gantry storage get <id> -o - | sha256sum
${footer}`,
    )
    .action(async (id: string, flags, command: Command) => (await transfers()).getAction(id, flags, command, context));

  connectionOptions(storage.command('export <id>'))
    .description('export a storage document (application/vnd.google-apps.*) as another type (files.export; 10 MB at most)')
    .requiredOption('--mime <type>', 'the type to export as: text/plain, text/html, application/pdf, text/csv, …')
    .option('-o, --output <file>', "where to: a file, a folder, or - for stdout (default: its title and the type's extension here)")
    .addHelpText(
      'after',
      `
Examples:
  gantry storage export <docId> --mime application/pdf
  gantry storage export <sheetId> --mime text/csv -o - | head
${footer}`,
    )
    .action(async (id: string, flags, command: Command) => (await transfers()).exportAction(id, flags, command, context));

  connectionOptions(storage.command('mkdir <title>'))
    .description('create a folder')
    .option('--parent <id>', 'inside this folder (default the root)')
    .addHelpText('after', `\nExample:\n  gantry storage mkdir releases --parent <folderId>\n${footer}`)
    .action(async (title: string, flags, command: Command) => (await actions()).mkdirAction(title, flags, command, context));

  connectionOptions(storage.command('mv <id>'))
    .description('move a file or folder into another folder (its parents become that folder alone); a folder cannot go into itself or its subfolders')
    .requiredOption('--to <folderId>', 'the folder to move it to (root: the root folder)')
    .addHelpText('after', `\nExample:\n  gantry storage mv <id> --to <folderId>\n${footer}`)
    .action(async (id: string, flags, command: Command) => (await actions()).mvAction(id, flags, command, context));

  connectionOptions(storage.command('trash <id>'))
    .description('move a file or folder to the trash (untrash brings it back)')
    .addHelpText('after', `\nExample:\n  gantry storage trash <id>\n${footer}`)
    .action(async (id: string, flags, command: Command) => (await actions()).trashAction('trash', id, flags, command, context));

  connectionOptions(storage.command('untrash <id>'))
    .description('restore a file or folder from the trash')
    .addHelpText(
      'after',
      `
A file inside a trashed folder stays in the trash until that folder is restored: untrash then names the folder and
exits 1.

Example:
  gantry storage ls --trashed && gantry storage untrash <id>
${footer}`,
    )
    .action(async (id: string, flags, command: Command) => (await actions()).trashAction('untrash', id, flags, command, context));

  connectionOptions(storage.command('rm <id>'))
    .description('delete a file or folder permanently, skipping the trash (a folder with everything in it)')
    .option('-y, --yes', 'do not ask: needed when stdin is not a terminal')
    .addHelpText(
      'after',
      `
At a terminal rm names the file and asks; elsewhere (a script, CI) it deletes only with --yes, and refuses (exit 2,
nothing sent) without it. \`gantry storage trash\` is the reversible way.

Examples:
  gantry storage rm <id>
  gantry storage rm <id> --yes
${footer}`,
    )
    .action(async (id: string, flags, command: Command) => (await actions()).rmAction(id, flags, command, context));

  connectionOptions(storage.command('share <id>'))
    .description('give someone a role on a file or folder (permissions.insert)')
    .requiredOption('--role <role>', 'reader, commenter, writer or owner')
    .option('--email <address>', 'the user or group (with --type user, the default, or group)')
    .option('--domain <name>', 'everyone in this domain (--type domain)')
    .option('--type <type>', 'user, group, domain or anyone (default user; domain when only --domain is given)')
    .option('--no-notify', 'send no e-mail about it (sendNotificationEmails=false)')
    .option('--message <text>', 'a message for the notification e-mail')
    .addHelpText(
      'after',
      `
A commenter is a reader with the additional role commenter (Drive v2 has no role of that name).

Examples:
  gantry storage share <id> --email ana@example.com --role writer
  gantry storage share <id> --type domain --domain example.com --role reader
  gantry storage share <id> --type anyone --role reader
${footer}`,
    )
    .action(async (id: string, flags, command: Command) => (await actions()).shareAction(id, flags, command, context));

  connectionOptions(storage.command('revisions <id>'))
    .description("a file's revisions: id, modified, size, md5, by, pinned (get --revision downloads one)")
    .addHelpText('after', `\nExample:\n  gantry storage revisions <id> --json\n${footer}`)
    .action(async (id: string, flags, command: Command) => (await actions()).revisionsAction(id, flags, command, context));

  connectionOptions(storage.command('changes'))
    .description('the change log from a page token (default: from the beginning), or with --watch the changes as they come, until Ctrl-C')
    .option('--page-token <token>', 'start here: the token the last run printed (Next: …, or the last JSON line)')
    .option('--watch', 'register a push channel (changes.watch) and print its notifications and the changes they announce; channels.stop on exit')
    .option('--listen <host:port>', 'where the notification receiver listens (default 127.0.0.1:0, any free port); the service must reach it')
    .option('--address <url>', 'the https URL the service posts notifications to, when it is not the --listen address itself (a tunnel or proxy to it)')
    .option(
      '--channel-lifetime <duration>',
      "how long each channel is asked to live (90s, 10m, 2h, 7d; default STORAGE_CHANNEL_LIFETIME, else the service's, an hour); a new channel takes over before one expires",
    )
    .addHelpText(
      'after',
      `
Without --page-token, changes lists the whole log and --watch what happens from now on. The last line is the token to
start from next time (on stderr, or {"kind":"storage#startPageToken",…} with --json). With --watch each notification
is printed (notification 2: change), then the changes it announces; Ctrl-C, SIGTERM or a reader that goes away stops
the channel (channels.stop) and exits 0. A channel is replaced by a new one before it expires; while none can be
registered the log is read at least once a minute.

Examples:
  gantry storage changes --page-token 42
  gantry storage changes --watch --json
  gantry storage changes --watch --listen 127.0.0.1:8765
${footer}`,
    )
    .action(async (flags, command: Command) => (await changes()).changesAction(flags, command, context));

  connectionOptions(storage.command('about'))
    .description('the account, root folder, quota and limits (about.get), and where the token comes from')
    .addHelpText('after', `\nExample:\n  gantry storage about --json\n${footer}`)
    .action(async (flags, command: Command) => (await actions()).aboutAction(flags, command, context));
}
