// An editor's side of ACP written with the official TypeScript SDK (@agentclientprotocol/sdk,
// installed by .ci/install-test-tools): spawn `mm-tui acp`, run the scenario in the JSON file
// given as the only argument, and write every message both ways, as sent, to its `log` (one
// JSON object per line: {"from": "agent"|"client", "message": ...}). The SDK parses what the
// agent sends with its own schemas; a message it refuses fails the run (exit code 1).
//
// The scenario: {"sdk": path of the SDK's stable entry, "agent": [argv...], "cwd": ...,
// "log": ..., "capabilities": ClientCapabilities, "prompts": [text...], "load": bool,
// "answers": [optionId...], "buffers": {path: text}}. With `fs` capabilities it reads and
// writes the real files, except those in `buffers` (an editor's unsaved text: read from there,
// written there); with `terminal` it runs commands in its own processes, as an editor's
// terminal would, keeping at most `outputByteLimit` bytes (the end, as the protocol says).

import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { Readable, Transform, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const acp = await import(pathToFileURL(scenario.sdk).href);
const { methods } = acp;

function recorder(from) {
  let pending = "";
  return new Transform({
    transform(chunk, _encoding, done) {
      pending += chunk.toString("utf8");
      let end;
      while ((end = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, end).trim();
        pending = pending.slice(end + 1);
        if (line) appendFileSync(scenario.log, JSON.stringify({ from, message: JSON.parse(line) }) + "\n");
      }
      done(null, chunk);
    },
  });
}

const child = spawn(scenario.agent[0], scenario.agent.slice(1), {
  cwd: scenario.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const toAgent = recorder("client");
toAgent.pipe(child.stdin);
const fromAgent = child.stdout.pipe(recorder("agent"));
const stream = acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(fromAgent));

const answers = [...(scenario.answers ?? [])];
const buffers = { ...(scenario.buffers ?? {}) };
const terminals = new Map();
let nextTerminal = 0;

const app = acp
  .client({ name: "mm-tui-ts-check" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    const optionId = answers.shift() ?? params.options[0].optionId;
    return { outcome: { outcome: "selected", optionId } };
  })
  .onNotification(methods.client.session.update, async () => {})
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    const text = params.path in buffers ? buffers[params.path] : readFileSync(params.path, "utf8");
    let lines = text.split("\n");
    if (params.line) lines = lines.slice(params.line - 1);
    if (params.limit) lines = lines.slice(0, params.limit);
    return { content: lines.join("\n") };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    if (params.path in buffers) buffers[params.path] = params.content;
    else writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest(methods.client.terminal.create, async ({ params }) => {
    const id = `term-${nextTerminal++}`;
    const env = Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value]));
    const proc = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? scenario.cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const term = { output: Buffer.alloc(0), truncated: false, exit: null, done: null };
    term.done = new Promise((resolve) =>
      proc.on("close", (code, signal) => {
        term.exit = { exitCode: code, signal: signal ?? null };
        resolve();
      }),
    );
    const keep = (data) => {
      term.output = Buffer.concat([term.output, data]);
      const limit = params.outputByteLimit;
      if (limit != null && term.output.length > limit) {
        let start = term.output.length - limit;
        while (start < term.output.length && (term.output[start] & 0xc0) === 0x80) start++;
        term.output = term.output.subarray(start);
        term.truncated = true;
      }
    };
    proc.stdout.on("data", keep);
    proc.stderr.on("data", keep);
    term.proc = proc;
    terminals.set(id, term);
    return { terminalId: id };
  })
  .onRequest(methods.client.terminal.output, async ({ params }) => {
    const term = terminals.get(params.terminalId);
    const output = term.output.toString("utf8");
    return { output, truncated: term.truncated, exitStatus: term.exit ?? undefined };
  })
  .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
    const term = terminals.get(params.terminalId);
    await term.done;
    return term.exit;
  })
  .onRequest(methods.client.terminal.kill, async ({ params }) => {
    terminals.get(params.terminalId)?.proc.kill("SIGKILL");
    return {};
  })
  .onRequest(methods.client.terminal.release, async ({ params }) => {
    terminals.get(params.terminalId)?.proc.kill("SIGKILL");
    terminals.delete(params.terminalId);
    return {};
  });

let failed = false;
try {
  await app.connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: scenario.capabilities ?? {},
      clientInfo: { name: "mm-tui-ts-check", version: "0" },
    });
    const session = await agent.request(methods.agent.session.new, {
      cwd: scenario.cwd,
      mcpServers: [],
    });
    for (const text of scenario.prompts) {
      await agent.request(methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text }],
      });
    }
    if (scenario.load) {
      await agent.request(methods.agent.session.load, {
        sessionId: session.sessionId,
        cwd: scenario.cwd,
        mcpServers: [],
      });
    }
  });
} catch (error) {
  failed = true;
  console.error(`ts-client: ${error?.stack ?? error}`);
}
child.stdin.end();
child.kill("SIGTERM");
process.exit(failed ? 1 : 0);
