/**
 * Replaces the stock initializer, which points at a public demo document and an online validator. It also
 * pre-fills file inputs with the API's example file (an image): Swagger UI shows a file chooser for binary
 * bodies and form parts, and no JSON example can fill one. The link comes from /docs.json (`externalValue` of
 * the body's example, else `x-tiffin-example-files['']`; a form's parts by name); the file is set as a user's choice
 * would be.
 * An event-stream answer (server-sent events) is shown as its events arrive, in a panel under the operation with
 * a Stop button: Swagger UI itself shows a response only once it has ended, a spinner until then.
 */
export const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: './docs.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    requestInterceptor: function (req) {
      req.userFetch = streamingFetch;
      return req;
    },
  });
  prefillExampleFiles(window.ui);
};

/** The operation block a request URL belongs to (by its path and method), if it is on the page. */
function operationBlock(url, method) {
  var path = new URL(url, location.href).pathname;
  var found = null;
  document.querySelectorAll('.opblock-summary-path').forEach(function (el) {
    var block = el.closest('.opblock');
    if (!found && el.getAttribute('data-path') === path && block &&
        block.className.indexOf('opblock-' + String(method || 'get').toLowerCase()) !== -1) found = block;
  });
  return found;
}

/** fetch, but a text/event-stream answer is written into a live panel as it arrives. */
function streamingFetch(url, init) {
  var controller = new AbortController();
  if (init.signal) init.signal.addEventListener('abort', function () { controller.abort(); });
  return fetch(url, Object.assign({}, init, { signal: controller.signal })).then(function (res) {
    var type = res.headers.get('content-type') || '';
    if (!res.body || type.indexOf('text/event-stream') !== 0) return res;
    var block = operationBlock(url, init.method);
    var panel = null;
    var log = null;
    if (block) {
      panel = block.querySelector('.tiffin-live-events');
      if (panel) panel.remove();
      panel = document.createElement('section');
      panel.className = 'tiffin-live-events';
      panel.setAttribute('aria-live', 'polite');
      var title = document.createElement('h4');
      title.textContent = 'Events as they arrive';
      var stop = document.createElement('button');
      stop.type = 'button';
      stop.className = 'btn';
      stop.textContent = 'Stop';
      stop.addEventListener('click', function () { controller.abort(); });
      log = document.createElement('pre');
      log.className = 'microlight';
      panel.append(title, stop, log);
      var anchor = block.querySelector('.execute-wrapper, .btn-group') || block.querySelector('.opblock-body');
      if (anchor) anchor.after(panel); else block.append(panel);
    }
    var reader = res.body.getReader();
    var decoder = new TextDecoder();
    var text = '';
    function finish(note) {
      if (log && note) log.textContent += note;
      if (panel) { var b = panel.querySelector('button'); if (b) b.disabled = true; }
      return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
    }
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return finish('');
        var piece = decoder.decode(chunk.value, { stream: true });
        text += piece;
        if (log) log.textContent += piece;
        return pump();
      }, function () { return finish(' (stopped)'); });
    }
    return pump();
  });
}

function prefillExampleFiles(ui) {
  var files = new Map();
  var seen = new WeakSet();
  function fetchFile(link) {
    if (!files.has(link)) {
      files.set(link, fetch(new URL(link, location.href)).then(function (res) {
        if (!res.ok) throw new Error('example file ' + link + ': ' + res.status);
        var name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') || '');
        return res.blob().then(function (blob) {
          return new File([blob], name ? name[1] : 'example', { type: blob.type });
        });
      }));
    }
    return files.get(link);
  }
  function linkFor(input) {
    var block = input.closest('.opblock');
    var path = block && block.querySelector('.opblock-summary-path');
    var method = block && /opblock-(get|post|put|patch|delete)/.exec(block.className);
    if (!path || !method) return null;
    var operation = ui.specSelectors.specJson().getIn(['paths', path.getAttribute('data-path'), method[1]]);
    var content = operation && operation.getIn(['requestBody', 'content']);
    if (!content) return null;
    var row = input.closest('tr[data-property-name]');
    var link = null;
    content.forEach(function (media) {
      if (link) return;
      link = row
        ? media.getIn(['x-tiffin-example-files', row.getAttribute('data-property-name')])
        : media.getIn(['examples', 'example', 'externalValue']) || media.getIn(['x-tiffin-example-files', '']);
    });
    return link || null;
  }
  function fill(input) {
    seen.add(input);
    var link = linkFor(input);
    if (!link) return;
    fetchFile(link).then(function (file) {
      var chosen = new DataTransfer();
      chosen.items.add(file);
      input.files = chosen.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    }, function (err) { console.warn(err.message); });
  }
  new MutationObserver(function () {
    document.querySelectorAll('.opblock input[type=file]').forEach(function (input) {
      if (!input.disabled && !seen.has(input)) fill(input);
    });
  }).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['disabled'] });
}
`;
