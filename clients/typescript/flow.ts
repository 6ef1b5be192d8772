// An integrator's way through the API in TypeScript, typed only by what openapi-typescript
// generates from the served document (openapi.ts beside this file, written by the test)
// and sent with openapi-fetch; run by node against the service. It reads the confirmation
// mail from the file mail backend's folder (no API serves it) and receives the webhook
// deliveries on 127.0.0.1, checked with the npm `standardwebhooks` package.
//
// Environment: BASE_URL (the service), OUTBOX (the mail folder), RECEIVER_PORT (a free port
// the service may deliver to). Any failed check throws: node exits non-zero with its words.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { join } from "node:path";
import createClient, { type Client } from "openapi-fetch";
import { Webhook } from "standardwebhooks";
import type { components, paths, webhooks } from "./openapi.ts";

type Note = components["schemas"]["Note"];
// A delivery's body as the document's `webhooks` section names it for each event type.
type Delivered<T extends keyof webhooks> = NonNullable<
  webhooks[T]["post"]["requestBody"]
>["content"]["application/json"];

const BASE_URL = setting("BASE_URL");
const OUTBOX = setting("OUTBOX");
const RECEIVER_PORT = Number(setting("RECEIVER_PORT"));
const PASSWORD = "correct horse battery staple 42";
const LATITUDE = 47.3769;
const LONGITUDE = 8.5417;
const suffix = Math.random().toString(16).slice(2, 10);
const email = `ts-integrator-${suffix}@example.com`;
const userName = `ts_integrator_${suffix}`;

const anonymous = createClient<paths>({ baseUrl: BASE_URL });

function setting(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set`);
  return value;
}

function must<T>(value: T | null | undefined, what: string): T {
  assert.ok(value !== undefined && value !== null, `${what} is missing`);
  return value;
}

function expectStatus(response: Response, status: number, error: unknown): void {
  assert.equal(
    response.status,
    status,
    `${response.url}: ${response.status} ${JSON.stringify(error)}`,
  );
}

async function until<T>(what: string, find: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = find();
    if (found !== undefined) {
      return found;
    }
    assert.ok(Date.now() < deadline, `no ${what} within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// --- the mail --------------------------------------------------------------------------

/** The text of a single-part mail, decoded from its transfer encoding. */
function mailText(eml: string): string {
  const split = eml.search(/\r?\n\r?\n/);
  const head = eml.slice(0, split);
  const body = eml.slice(split).trim();
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (encoding === "base64") {
    return Buffer.from(body, "base64").toString("utf8");
  }
  if (encoding === "quoted-printable") {
    const bytes = body
      .replace(/=\r?\n/g, "")
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, "latin1").toString("utf8");
  }
  return body;
}

function confirmationLink(): URL | undefined {
  const files = existsSync(OUTBOX) ? readdirSync(OUTBOX) : []; // made with the first mail
  for (const name of files.filter((file) => file.endsWith(".eml")).sort()) {
    const eml = readFileSync(join(OUTBOX, name), "latin1");
    if (!eml.split(/\r?\n/).some((line) => line.toLowerCase() === `to: ${email}`)) {
      continue;
    }
    const link = /\S+\/api\/auth\/confirmEmail\?\S+/.exec(mailText(eml));
    assert.ok(link, "the confirmation mail has no link");
    return new URL(link[0]);
  }
  return undefined;
}

// --- the webhook receiver --------------------------------------------------------------

interface Received {
  headers: Record<string, string>;
  body: string;
}

const received: Received[] = [];
const receiver = createServer((request: IncomingMessage, answer) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string") {
        headers[name] = value;
      }
    }
    received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
    answer.writeHead(204).end();
  });
});

function delivery(type: string): Received | undefined {
  return received.find((one) => (JSON.parse(one.body) as { type: string }).type === type);
}

// --- the steps -------------------------------------------------------------------------

async function register(): Promise<void> {
  const { error, response } = await anonymous.POST("/api/auth/register", {
    body: { email, userName, password: PASSWORD },
  });
  expectStatus(response, 200, error);
  assert.ok(response.headers.get("X-RateLimit-Limit"), "a rate-limited answer without its limit");
  assert.ok(response.headers.get("X-RateLimit-Remaining"));
  assert.ok(response.headers.get("X-RateLimit-Reset"));
}

async function confirm(): Promise<void> {
  const link = await until("confirmation mail", confirmationLink);
  const { data, error, response } = await anonymous.GET("/api/auth/confirmEmail", {
    params: {
      query: {
        userId: must(link.searchParams.get("userId"), "userId"),
        code: must(link.searchParams.get("code"), "code"),
      },
    },
    parseAs: "text", // documented as text/plain
  });
  expectStatus(response, 200, error);
  assert.match(response.headers.get("Content-Type") ?? "", /^text\/plain/);
  assert.match(must(data, "the answer"), /confirm/i);
}

async function signIn(): Promise<Client<paths>> {
  const { data, error, response } = await anonymous.POST("/api/auth/login", {
    params: { query: { useCookies: false, useSessionCookies: false } },
    body: { email, password: PASSWORD },
  });
  expectStatus(response, 200, error);
  const token = must(data, "the token");
  assert.equal(token.tokenType, "Bearer");
  assert.ok(must(token.expiresIn, "expiresIn") > 0);
  const user = createClient<paths>({
    baseUrl: BASE_URL,
    headers: { Authorization: `Bearer ${must(token.accessToken, "accessToken")}` },
  });
  const info = await user.GET("/api/auth/manage/info");
  expectStatus(info.response, 200, info.error);
  assert.equal(must(info.data, "the account").email, email);
  assert.equal(info.data?.isEmailConfirmed, true);
  return user;
}

async function notes(user: Client<paths>): Promise<Note> {
  const made: Note[] = [];
  for (const title of ["Fountain by the lake", "Bench with a view", "Old oak"]) {
    const { data, error, response } = await user.POST("/api/notes/mine", {
      body: {
        title,
        body: "Written from TypeScript.",
        contentLanguage: "en-US",
        latitude: LATITUDE,
        longitude: LONGITUDE,
      },
    });
    expectStatus(response, 201, error);
    const note = must(data, "the note");
    assert.equal(note.title, title);
    assert.equal(note.visibility, "Private");
    made.push(note);
  }
  // A page of two, then the rest by the `Link` header's next page.
  const first = await user.GET("/api/notes/mine", { params: { query: { limit: 2 } } });
  expectStatus(first.response, 200, first.error);
  assert.equal(must(first.data, "the first page").length, 2);
  const next = /<([^>]+)>;\s*rel="next"/.exec(first.response.headers.get("Link") ?? "");
  const url = new URL(must(next?.[1], "the next page's link"), BASE_URL);
  assert.equal(url.pathname, "/api/notes/mine");
  const second = await user.GET("/api/notes/mine", {
    params: {
      query: {
        limit: Number(must(url.searchParams.get("limit"), "limit")),
        cursor: must(url.searchParams.get("cursor"), "cursor"),
      },
    },
  });
  expectStatus(second.response, 200, second.error);
  assert.equal(second.response.headers.get("Link"), null, "the last page links on");
  const paged = [...(first.data ?? []), ...(second.data ?? [])].map((note) => note.noteId);
  assert.deepEqual(paged.sort(), made.map((note) => note.noteId).sort());
  return must(made[0], "the first note");
}

async function discovery(user: Client<paths>, note: Note): Promise<void> {
  const bounds = {
    minLatitude: LATITUDE - 0.1,
    minLongitude: LONGITUDE - 0.1,
    maxLatitude: LATITUDE + 0.1,
    maxLongitude: LONGITUDE + 0.1,
  };
  const hidden = await anonymous.GET("/api/notes/public/bounds", { params: { query: bounds } });
  expectStatus(hidden.response, 200, hidden.error);
  assert.deepEqual(hidden.data, []);
  const noteId = must(note.noteId, "noteId");
  const moved = await user.POST("/api/notes/mine/{noteId}/move", {
    params: { path: { noteId } },
    body: { visibility: "Public" },
  });
  expectStatus(moved.response, 200, moved.error);
  assert.equal(moved.data?.visibility, "Public");
  assert.equal(moved.data?.title, note.title);
  const found = await anonymous.GET("/api/notes/public/bounds", { params: { query: bounds } });
  expectStatus(found.response, 200, found.error);
  assert.deepEqual(
    must(found.data, "the public notes").map((one) => one.noteId),
    [noteId],
  );
}

async function trackable(user: Client<paths>): Promise<void> {
  const created = await user.POST("/api/trackables", {
    body: { name: "Blue travel bug", description: "Pass it on." },
  });
  expectStatus(created.response, 201, created.error);
  const item = must(created.data?.items?.[0], "the created item");
  const trackableId = must(item.trackableId, "trackableId");
  const lookup = await user.POST("/api/trackables/lookup", {
    body: { code: must(item.secretCode, "secretCode") },
  });
  expectStatus(lookup.response, 200, lookup.error);
  assert.equal(lookup.data?.trackableId, trackableId);
  const activated = await user.POST("/api/trackables/{trackableId}/activate", {
    params: { path: { trackableId } },
    body: {
      statusMessage: "Heading north",
      initialJourneyStopLatitude: LATITUDE,
      initialJourneyStopLongitude: LONGITUDE,
    },
  });
  expectStatus(activated.response, 200, activated.error);
  assert.equal(activated.data?.isActivated, true);
  const stop = await user.POST("/api/trackables/{trackableId}/journey-stops", {
    params: { path: { trackableId } },
    body: { latitude: 46.948, longitude: 7.4474 },
  });
  expectStatus(stop.response, 201, stop.error);
  const journey = await anonymous.GET("/api/trackables/{trackableId}/journey", {
    params: { path: { trackableId } },
  });
  expectStatus(journey.response, 200, journey.error);
  const stops = must(journey.data, "the journey");
  assert.equal(stops.length, 2);
  assert.equal(stops[1]?.journeyStopId, stop.data?.journeyStopId);
}

async function webhook(user: Client<paths>): Promise<void> {
  // A team's webhook hears its team's events, its own admins' changes too.
  const team = await user.POST("/api/teams", { body: { name: `Walkers ${suffix}` } });
  expectStatus(team.response, 201, team.error);
  const teamId = must(team.data?.teamId, "teamId");
  const hook = await user.POST("/api/webhooks", {
    body: {
      url: `http://127.0.0.1:${RECEIVER_PORT}/hook`,
      eventTypes: ["team.note.created"],
      teamId,
    },
  });
  expectStatus(hook.response, 201, hook.error);
  const subscription = must(hook.data, "the webhook");
  const check = new Webhook(subscription.secret);
  const test = await user.POST("/api/webhooks/{webhookId}/test", {
    params: { path: { webhookId: subscription.webhookId } },
  });
  expectStatus(test.response, 202, test.error);
  const note = await user.POST("/api/teams/{teamId}/notes", {
    params: { path: { teamId } },
    body: { title: "Meeting point", contentLanguage: "en-US" },
  });
  expectStatus(note.response, 201, note.error);

  const tested = await until("webhook.test delivery", () => delivery("webhook.test"));
  const testBody = check.verify(tested.body, tested.headers) as Delivered<"webhook.test">;
  assert.equal(testBody.type, "webhook.test");
  assert.equal(testBody.data.webhookId, subscription.webhookId);

  const made = await until("team.note.created delivery", () => delivery("team.note.created"));
  const event = check.verify(made.body, made.headers) as Delivered<"team.note.created">;
  assert.equal(event.type, "team.note.created");
  assert.equal(event.data.teamId, teamId);
  assert.equal(event.data.noteId, note.data?.noteId);
  assert.equal(event.data.teamName, `Walkers ${suffix}`);
  assert.ok(!Number.isNaN(Date.parse(event.timestamp)));
  assert.throws(() => check.verify(made.body.replace("Walkers", "Runners"), made.headers));

  const listed = await user.GET("/api/webhooks/{webhookId}/deliveries", {
    params: { path: { webhookId: subscription.webhookId } },
  });
  expectStatus(listed.response, 200, listed.error);
  const ids = must(listed.data, "the deliveries").map((one) => one.deliveryId);
  assert.ok(ids.includes(must(made.headers["webhook-id"], "webhook-id")));
}

async function main(): Promise<void> {
  await new Promise<void>((resolve) => receiver.listen(RECEIVER_PORT, "127.0.0.1", resolve));
  try {
    await register();
    await confirm();
    const user = await signIn();
    await discovery(user, await notes(user));
    await trackable(user);
    await webhook(user);
  } finally {
    receiver.close();
  }
  console.log("typescript flow: 7 steps passed");
}

await main();
