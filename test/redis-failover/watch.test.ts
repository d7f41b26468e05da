// FailoverWatch, driven by the announcements a Sentinel publishes. Any Redis server carries them (PUBLISH on the
// Sentinel's channel names), so the project's own server plays the Sentinels here, and a connection to it plays a
// tracked connection of the app. Each of a failover's Sentinels announces the switch, each when it learns of it: a
// connection already on the new master must not be held back again by the second or the third announcement.
import t from 'tap';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { FailoverWatch, redisConnection } from '../../src/plugins/redis.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const { url } = redisConnection(process.env);
const { hostname, port } = new URL(url);
const NAME = `watch-${randomBytes(4).toString('hex')}`;
const events: string[] = [];
const watch = new FailoverWatch({ url, sentinels: `${hostname}:${port}`, sentinelName: NAME }, (event) =>
  events.push(event),
);
const publisher = new Redis(url);
const tracked = new Redis(url);
t.teardown(() => {
  watch.close();
  publisher.disconnect();
  tracked.disconnect();
});
await once(tracked, 'ready');
watch.track(tracked);

/** Publishes an announcement once the watch has subscribed, and waits until it has heard it. */
async function announce(channel: string, message: string) {
  const heard = events.length;
  for (let i = 0; i < 200 && (await publisher.publish(channel, message)) === 0; i++) await sleep(10);
  for (let i = 0; i < 200 && events.length === heard; i++) await sleep(10);
  if (events.length === heard) throw new Error(`the watch did not hear ${channel}`);
}

const here = `127.0.0.1 ${port}`;
const elsewhere = '127.0.0.1 1';

t.test('a failover holds a connection from the promotion until it is on the new master', async (t) => {
  t.notOk(watch.holds(tracked), 'no failover: not held');
  await announce('+failover-state-send-slaveof-noone', `slave 127.0.0.1:${port} ${here} @ ${NAME} ${elsewhere}`);
  t.ok(watch.holds(tracked), 'a replica is being promoted: held');
  await announce('+switch-master', `${NAME} ${elsewhere} ${here}`);
  t.notOk(watch.holds(tracked), 'the first Sentinel announces the switch to the server it is on: not held');
  await announce('+switch-master', `${NAME} ${elsewhere} ${here}`);
  await announce('+switch-master', `${NAME} ${elsewhere} ${here}`);
  t.notOk(watch.holds(tracked), 'the second and third Sentinels announce it too: still not held');
  t.equal(tracked.status, 'ready', 'and never dropped');
});

t.test('a connection on another server is dropped at the switch and held until it connects again', async (t) => {
  await announce('+failover-state-send-slaveof-noone', `slave 127.0.0.1:1 ${elsewhere} @ ${NAME} ${here}`);
  const closed = once(tracked, 'close');
  await announce('+switch-master', `${NAME} ${here} ${elsewhere}`);
  await closed;
  t.ok(watch.holds(tracked), 'dropped, and held until it is connected again');
  await once(tracked, 'ready');
  t.notOk(watch.holds(tracked), 'connected again after the switch: not held');
});

t.test("another master's failover is not this one's", async (t) => {
  await announce('+failover-state-send-slaveof-noone', `slave 127.0.0.1:1 ${elsewhere} @ ${NAME} ${here}`);
  t.ok(watch.holds(tracked), 'held');
  await publisher.publish('+switch-master', `other-${NAME} ${here} ${elsewhere}`);
  await announce('-failover-abort-not-elected', `master ${NAME} ${here}`);
  t.equal(tracked.status, 'ready', 'the other master switched: not dropped');
  t.notOk(watch.holds(tracked), 'and the aborted failover holds nothing');
});
