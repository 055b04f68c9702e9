// Route parameters and constraints, as the Azure docs' route examples use them.
const { app } = require('@azure/functions');

app.get('getProduct', {
    authLevel: 'anonymous',
    route: 'products/{category:alpha}/{id:int?}',
    handler: async (request, context) => {
        const category = request.params.category;
        const id = request.params.id;
        return { jsonBody: { category, id: id === undefined ? null : Number(id), invocation: typeof context.invocationId } };
    }
});

app.get('latestProduct', {
    authLevel: 'anonymous',
    route: 'products/latest',
    handler: () => ({ body: 'the latest product' })
});

app.post('createProduct', {
    authLevel: 'anonymous',
    route: 'products',
    handler: async (request) => {
        const product = await request.json();
        return {
            status: 201,
            jsonBody: { created: product.name },
            headers: { Location: `/api/products/${product.name}` },
            cookies: [{ name: 'last', value: product.name, path: '/api', httpOnly: true, sameSite: 'Lax' }]
        };
    }
});

// The caller Azure's authentication names (Static Web Apps, App Service), as request.user reads it.
app.get('whoami', {
    authLevel: 'anonymous',
    handler: (request) => ({ jsonBody: { user: request.user } })
});
