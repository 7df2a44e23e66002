/**
 * Replaces the stock initializer, which points at a public demo document and an online validator. It also
 * pre-fills file inputs with the API's example file (an image): Swagger UI shows a file chooser for binary
 * bodies and form parts, and no JSON example can fill one. The link comes from /docs.json (`externalValue` of
 * the body's example, `x-tiffin-example-files` of a form's parts); the file is set as a user's choice would be.
 */
export const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: './docs.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
  prefillExampleFiles(window.ui);
};

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
        : media.getIn(['examples', 'example', 'externalValue']);
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
