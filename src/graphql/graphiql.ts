// The GraphiQL page at GET /graphql (Accept: text/html), built from packaged assets only: Yoga's
// @graphql-yoga/render-graphiql inlines GraphiQL, its CSS and its Monaco workers into one HTML page, so the page
// works with no internet access. We add a key bar: the API key is kept in the browser's localStorage and sent as
// `Authorization: Bearer <key>` on every request the page makes to this service (queries, mutations and SSE
// subscriptions), so it survives a reload and never has to be typed into the headers editor.
import type { GraphiQLOptions } from 'graphql-yoga';

/** localStorage key holding the API key of the GraphiQL page. */
export const GRAPHIQL_KEY_STORAGE = 'switchboard.apiKey';

const keyBar = `
<style>
  html, body { height: 100%; margin: 0; }
  #sb-keybar { box-sizing: border-box; height: 40px; display: flex; gap: 8px; align-items: center; padding: 0 12px;
    font: 13px system-ui, sans-serif; background: #0b1b2b; color: #e8eef5; }
  #sb-keybar input { width: 28em; font: 13px ui-monospace, monospace; padding: 3px 6px; }
  #sb-keybar button { font: 13px system-ui, sans-serif; padding: 3px 10px; }
  #sb-keybar .sb-hint { opacity: .75; }
  #root { height: calc(100% - 40px); }
</style>
<div id="sb-keybar">
  <label for="sb-api-key">API key</label>
  <input id="sb-api-key" type="password" autocomplete="off" spellcheck="false" placeholder="sk_… (sent as Authorization: Bearer)">
  <button id="sb-save-key" type="button">Save key</button>
  <button id="sb-forget-key" type="button">Forget</button>
  <span id="sb-key-status" class="sb-hint"></span>
</div>
<script>
(function () {
  var STORAGE = ${JSON.stringify(GRAPHIQL_KEY_STORAGE)};
  var input = document.getElementById('sb-api-key');
  var status = document.getElementById('sb-key-status');
  function key() { try { return localStorage.getItem(STORAGE) || ''; } catch (e) { return ''; } }
  function show() {
    var k = key();
    input.value = k;
    status.textContent = k ? 'Key saved in this browser (localStorage); sent with every request.'
      : 'No key: paste an API key and press Save key (requests answer 401 UNAUTHENTICATED without one).';
  }
  // GraphiQL fetched the schema when the page loaded, without a key (or with the old one): fetch it again with the
  // new key through GraphiQL's own "Re-fetch GraphQL schema" button, or reload when this GraphiQL has none.
  function refetchSchema() {
    var button = document.querySelector('[aria-label^="Re-fetch GraphQL schema"]');
    if (button) button.click(); else location.reload();
  }
  document.getElementById('sb-save-key').addEventListener('click', function () {
    localStorage.setItem(STORAGE, input.value.trim()); show(); refetchSchema();
  });
  input.addEventListener('keydown', function (e) { if (e.key === 'Enter') document.getElementById('sb-save-key').click(); });
  document.getElementById('sb-forget-key').addEventListener('click', function () {
    localStorage.removeItem(STORAGE); show(); refetchSchema();
  });
  // Every request of this page to this origin carries the saved key unless the headers editor sets one.
  var originalFetch = window.fetch.bind(window);
  window.fetch = function (resource, init) {
    var url = new URL(typeof resource === 'string' ? resource : (resource && resource.url) || String(resource), location.href);
    var k = key();
    if (k && url.origin === location.origin) {
      init = Object.assign({}, init);
      var headers = new Headers(init.headers || (resource instanceof Request ? resource.headers : undefined));
      if (!headers.has('authorization')) headers.set('authorization', 'Bearer ' + k);
      init.headers = headers;
    }
    return originalFetch(resource, init);
  };
  show();
})();
</script>`;

/**
 * The full GraphiQL HTML (about 9 MB, rendered once per options object and cached by the caller).
 * @render-graphiql is imported on the first call, not at start-up: its module is that 9 MB page as one string
 * (docs/operations.md "Start-up").
 * @param opts Yoga's GraphiQL options (title, default query).
 */
export async function renderSwitchboardGraphiQL(opts?: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  const html = renderGraphiQL(opts);
  const at = html.indexOf('<div id="root">');
  if (at < 0) throw new Error('render-graphiql changed its page: no <div id="root">');
  return `${html.slice(0, at)}${keyBar}${html.slice(at)}`;
}
