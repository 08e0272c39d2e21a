import type { ChromeDriver, Session } from '../../../automation/index.js';

/**
 * The one headless Chromium of a demo run, for the steps that open pages (login, browser, agent): started by the first
 * of them, kept for the others, stopped with the demo. A Chromium start is the dearest thing those steps do (~1 s on
 * an idle machine, 5–7 s of CPU under load), and they share nothing a fresh profile would protect: every page they
 * open is on 127.0.0.1, whose cookies a step deletes (WebDriver's Delete All Cookies) before the next one begins, so
 * the agent's sign-in never finds the login step's session. A step that fails ends the session; the next starts anew.
 */
export class SharedBrowser {
  #driver: Promise<ChromeDriver> | undefined;
  #session: Promise<Session> | undefined;

  /** Runs `work` in the demo's browser session, starting chromedriver and Chromium if no step has yet. */
  async use<T>(work: (session: Session, driver: ChromeDriver) => Promise<T>): Promise<T> {
    const driver = await this.#startDriver();
    this.#session ??= driver.newSession();
    const starting = this.#session;
    let session: Session;
    try {
      session = await starting;
    } catch (error) {
      if (this.#session === starting) this.#session = undefined;
      throw error;
    }
    try {
      const result = await work(session, driver);
      await session.deleteAllCookies();
      return result;
    } catch (error) {
      if (this.#session === starting) this.#session = undefined;
      // The step's own error is what the demo reports; a session that will not end is stopped with the driver.
      await session.delete().catch(() => undefined);
      throw error;
    }
  }

  /** Ends the session and stops chromedriver (and so Chromium), removing the profiles. Idempotent. */
  async close(): Promise<void> {
    const driver = this.#driver;
    this.#driver = undefined;
    this.#session = undefined;
    await driver?.then((running) => running.stop()).catch(() => undefined);
  }

  async #startDriver(): Promise<ChromeDriver> {
    if (!this.#driver) {
      const { startChromeDriver } = await import('../../../automation/index.js');
      this.#driver ??= startChromeDriver({});
    }
    const starting = this.#driver;
    try {
      return await starting;
    } catch (error) {
      if (this.#driver === starting) this.#driver = undefined;
      throw error;
    }
  }
}
