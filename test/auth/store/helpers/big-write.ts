// Writes a login of about 1 MiB to the file store in argv[2] and says so before and after: run under a file size
// limit, the write is cut off in the middle (SIGXFSZ), as a crash or a full disk would cut it.
import { FileTokenStore, profileKey } from '../../../../lib/auth/store/index.js';
import { canaries, makeLogin } from './logins.js';

const key = profileKey({ authUrl: 'http://127.0.0.1:5762', clientId: 'client-a', profile: 'default' });
const login = makeLogin(key, canaries('big'));
login.tokens.idToken = 'x'.repeat(1000 * 1024);
process.stdout.write('writing\n');
await new FileTokenStore(process.argv[2]!).write(login);
process.stdout.write('written\n');
