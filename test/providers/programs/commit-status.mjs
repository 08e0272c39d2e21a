// The same program as an ES-module consumer.
import { CommitStatus } from 'gantry/providers';

export default async function (args) {
  const status = new CommitStatus('status', args);
  return { statusId: status.statusId, url: status.url, createdAt: status.createdAt, state: status.state };
}
