// Starts Swagger UI on the /docs page. A file of its own (not an inline script) so the
// page's Content-Security-Policy can forbid inline scripts.
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    tryItOutEnabled: true,
    persistAuthorization: false,
  });
});
