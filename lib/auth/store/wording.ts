/**
 * How messages about the choice of token store name that choice: a program calling the library reads of its options
 * (`store: 'kv:…'`, `insecureStorage: true`), a person at the command of its flags (`--store kv:…`,
 * `--insecure-storage`). Both read the environment variables by the same names.
 */
export interface StoreNames {
  /** The choice of the store `spec`: `store: 'kv:secret/x'` or `--store kv:secret/x`. */
  store(spec: string): string;
  /** Allowing a plain-text file. */
  readonly insecureStorage: string;
}

/** The library's wording (the default). */
export const storeOptionNames: StoreNames = {
  store: (spec) => `store: '${spec}'`,
  insecureStorage: 'insecureStorage: true',
};

/** The command's wording (`gantry auth`, `gantry mcp`). */
export const storeFlagNames: StoreNames = {
  store: (spec) => `--store ${spec}`,
  insecureStorage: '--insecure-storage',
};
