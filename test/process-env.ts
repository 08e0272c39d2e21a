// Puts process.env back as a test found it. Assigning a copy to `process.env` instead would leave the worker with a
// plain object for every later file: Node's own readers of the environment (os.tmpdir(), os.homedir()) read the
// real one, which no longer follows what tests set (a later file's TMPDIR went unseen under mocha --parallel).
export function restoreProcessEnv(saved: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
}
