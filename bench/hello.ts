/** R3, the framework floor: Hono hello-world on @hono/node-server (PORT from the environment). */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.json({ hello: 'world' }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => console.log('ready'));
process.on('SIGTERM', () => process.exit(0));
