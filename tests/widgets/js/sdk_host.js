// An MCP Apps host built on the official SDK (npm @modelcontextprotocol/ext-apps, its AppBridge,
// with the v2 MCP client), for tests/widgets/test_sdk_host.py. Bundled by esbuild from
// tests/widgets/js/node_modules (pinned in tests/widgets/js/package.json) when the tests start.
//
// window.runSdkHost({server, tool, args, dropMeta, cancel}) connects to the server's /mcp, calls
// the tool (unless `cancel` names a reason: then the call is reported cancelled), puts the widget
// it read with resources/read in a sandboxed iframe and lets AppBridge speak to it: the handshake,
// the tool input and result, and the widget's tools/call, which AppBridge proxies to the server.
// It also offers openLinks, updateModelContext, message and logging, answers ui/request-display-mode
// and the widget's tools/list (the session's listing), and records what the widget asks in
// window.hostEvents (tests/widgets/test_widget_talks_back.py); window.sendAnotherResult and
// window.pendingResult (with `hold`) send a later result, `partial` a partial tool input first.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST = { name: "SDK Host", version: "1" };
const APPS = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };

window.hostLog = [];
window.sizes = [];
/** What the widget asked of the host beyond tools/call: [{method, params}] (model context, messages, links, modes, logs). */
window.hostEvents = [];
const record = (method, params) => {
  window.hostLog.push(method);
  window.hostEvents.push({ method, params });
};

window.runSdkHost = async ({ server, tool, args, dropMeta = false, cancel = null, serverTools = true, partial = null, hold = false, answerToolsList = true }) => {
  const client = new Client(HOST, { capabilities: { extensions: APPS } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server)));
  const { tools } = await client.listTools();
  const uri = getToolUiResourceUri(tools.find((t) => t.name === tool));
  const html = (await client.readResource({ uri })).contents[0].text;
  const result = cancel ? null : await client.callTool({ name: tool, arguments: args });
  const delivered = result && dropMeta ? { ...result, _meta: undefined } : result;

  const frame = document.getElementById("app");
  const context = {
    theme: "light", displayMode: "inline", availableDisplayModes: ["inline", "fullscreen", "pip"],
    containerDimensions: { maxHeight: 600, width: 800 }, platform: "web", locale: "en-GB",
  };
  // What this host offers the widget besides serverTools: links, model context, messages, logging.
  const offers = { openLinks: {}, updateModelContext: { text: {}, structuredContent: {} }, message: { text: {} }, logging: {} };
  const bridge = new AppBridge(serverTools ? client : null, HOST, serverTools ? { serverTools: {}, ...offers } : offers,
    { hostContext: context });
  bridge.onupdatemodelcontext = async (params) => (record("ui/update-model-context", params), {});
  bridge.onmessage = async (params) => (record("ui/message", params), {});
  bridge.onopenlink = async (params) => (record("ui/open-link", params), {});
  bridge.onloggingmessage = (params) => record("notifications/message", params);
  bridge.onrequestdisplaymode = async (params) => {
    record("ui/request-display-mode", params);
    window.hostContext = { ...window.hostContext, displayMode: params.mode };
    bridge.setHostContext(window.hostContext);
    return { mode: params.mode };
  };
  // The tools this session lists, for the widget's buttons (AppBridge proxies tools/call only;
  // answerToolsList: false is the plain AppBridge, which leaves the widget's tools/list unanswered).
  if (serverTools && answerToolsList) {
    bridge.setRequestHandler("tools/list", async (request) => {
      window.hostLog.push("tools/list");
      return client.listTools(request.params);
    });
  }
  window.mcpClient = client;
  window.pendingResult = async () => {
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(delivered);
  };
  bridge.onsizechange = ({ width, height }) => {
    window.sizes.push({ width, height });
    // Inline, the frame takes the height the app asks for; fullscreen and pip sizes are the host's.
    if (height !== undefined && window.hostContext.displayMode === "inline") frame.style.height = `${height}px`;
  };
  bridge.oninitialized = async () => {
    window.hostLog.push("initialized");
    if (partial) await bridge.sendToolInputPartial({ arguments: partial });
    if (hold) return;  // the test sends the result with window.pendingResult()
    await bridge.sendToolInput({ arguments: args });
    if (cancel) await bridge.sendToolCancelled({ reason: cancel });
    else await bridge.sendToolResult(delivered);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  if (serverTools) {
    const forward = bridge.oncalltool;
    bridge.oncalltool = (params, extra) => {
      window.hostLog.push(`tools/call ${params.name}`);
      return forward(params, extra);
    };
  }
  window.bridge = bridge;
  window.hostContext = context;
  frame.srcdoc = html;
  return { metaKeys: Object.keys((result && result._meta) || {}), appVersion: null };
};

/** A later call of `tool` from the host, its input and result sent to the widget already showing a map. */
window.sendAnotherResult = async ({ tool, args, partial = null }) => {
  if (partial) await window.bridge.sendToolInputPartial({ arguments: partial });
  const result = await window.mcpClient.callTool({ name: tool, arguments: args });
  await window.bridge.sendToolInput({ arguments: args });
  await window.bridge.sendToolResult(result);
  return { requestId: (result._meta || {}).request_id };
};

/** ping through AppBridge: what the widget answered (an empty result, or the error's text). */
window.pingApp = async () => {
  try {
    return { result: await window.bridge.request({ method: "ping" }) };
  } catch (error) {
    return { error: String(error.message || error) };
  }
};

/** A host-context change (only the changed fields travel), the iframe resized to match. */
window.changeContext = (changed) => {
  const frame = document.getElementById("app");
  const box = changed.containerDimensions;
  if (box && box.width) frame.style.width = `${box.width}px`;
  if (box && box.height) frame.style.height = `${box.height}px`;
  window.hostContext = { ...window.hostContext, ...changed };
  window.bridge.setHostContext(window.hostContext);
  return { app: window.bridge.getAppVersion(), capabilities: window.bridge.getAppCapabilities() };
};
