// Kyma nodejs20-24 passed a third argument, sendResponse(body, status, headers).
exports.main = function (event, context, sendResponse) {
  sendResponse({ callback: true }, 207, { 'X-Callback': 'yes' });
};
