// Webhook endpoints, deliveries and the management API's parameters (docs/webhooks.md).
import { Type, type Static } from '@sinclair/typebox';
import { NO_CONTROL, Offset, PATTERN_RULES, StringEnum } from './common.ts';

export const EVENT_TYPES = [
  'tax_delinquency.created',
  'tax_delinquency.updated',
  'tax_delinquency.removed',
  'parcel.sale_recorded',
  'parcel.owner_changed',
  'parcel.value_changed',
  'county.data_refreshed',
  'webhook.test',
] as const;

const ENDPOINT_ID = '^ep_[0-9a-f]{32}$';
const DELIVERY_ID = '^dlv_[0-9a-f]{16}$';
PATTERN_RULES.set(ENDPOINT_ID, 'must be an endpoint id: ep_ and 32 hex digits, as POST /v1/webhooks returned it');
PATTERN_RULES.set(DELIVERY_ID, 'must be a delivery id: dlv_ and 16 hex digits, as the deliveries list shows it');

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const Time = (description: string) => Type.String({ description: `${description} (ISO 8601 UTC, milliseconds).` });

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'Endpoint id (ep_…).' }),
    url: Type.String({ description: 'Where events are POSTed.' }),
    description: Type.Union([Type.String(), Type.Null()]),
    events: Type.Array(Type.String(), { description: 'Subscribed event types.' }),
    counties: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'Subscribed county slugs; null: every county.',
    }),
    status: StringEnum(['enabled', 'disabled'] as const, 'disabled: nothing is sent (see disabled_reason).'),
    disabled_reason: Nullable(Type.String({ description: 'Why the endpoint is disabled (by you, or after failing).' })),
    value_change_threshold: Type.Number({
      description: 'parcel.value_changed: sent when a new roll year moves the just value by more than this (percent).',
    }),
    beta: Type.Boolean({ description: 'True on the Pro plan, where webhooks are a beta feature.' }),
    previous_secret_expires_at: Type.Union([
      Time('Until when the secret replaced by a rotation also signs'),
      Type.Null(),
    ]),
    created_at: Time('Registered'),
    updated_at: Time('Last changed'),
  },
  { $id: 'WebhookEndpoint' },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Composite([
  WebhookEndpoint,
  Type.Object({
    secret: Type.String({
      description: 'The signing secret (whsec_…), shown only in this answer: store it now (/docs/guides/webhooks).',
    }),
  }),
]);

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// URL that receives the events.' });
const Events = Type.Array(Type.String({ maxLength: 64 }), {
  minItems: 1,
  maxItems: 20,
  description: `Event types to receive: ${EVENT_TYPES.join(', ')}.`,
});
const Counties = Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 67 }), Type.Null()], {
  description: 'County slugs to receive events of; left out or null: every county.',
});
const ValueChangeThreshold = Type.Number({
  minimum: 0,
  maximum: 1000,
  finite: true,
  description: 'parcel.value_changed: percent a new roll year must move a just value by, either way (default 10).',
});
// (null first: with type coercion on, a null would otherwise become '' through the string branch)
const Description = Type.Union([Type.Null(), Type.String({ maxLength: 500, pattern: NO_CONTROL })], {
  description: 'Your note about the endpoint (at most 500 characters).',
});

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    counties: Type.Optional(Counties),
    description: Type.Optional(Description),
    value_change_threshold: Type.Optional(ValueChangeThreshold),
  },
  {
    examples: [
      {
        url: 'https://hooks.example.com/florida',
        events: ['tax_delinquency.created', 'parcel.owner_changed'],
        counties: ['miami-dade'],
      },
    ],
  },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    counties: Type.Optional(Counties),
    description: Type.Optional(Description),
    status: Type.Optional(StringEnum(['enabled', 'disabled'] as const, 'enabled or disabled.')),
    value_change_threshold: Type.Optional(ValueChangeThreshold),
  },
  { examples: [{ status: 'enabled' }] },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const WebhookParams = Type.Object({
  id: Type.String({
    pattern: ENDPOINT_ID,
    description: 'Endpoint id (ep_…).',
    examples: ['ep_0123456789abcdef0123456789abcdef'],
  }),
});
export const DeliveryParams = Type.Object({
  id: Type.String({
    pattern: ENDPOINT_ID,
    description: 'Endpoint id (ep_…).',
    examples: ['ep_0123456789abcdef0123456789abcdef'],
  }),
  delivery_id: Type.String({
    pattern: DELIVERY_ID,
    description: 'Delivery id (dlv_…).',
    examples: ['dlv_0123456789abcdef'],
  }),
});

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export const DeliveriesQuery = Type.Object({
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, 'Only deliveries in this status.')),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Page size, 1-100 (default 25).' }),
  offset: Offset,
});

export const WebhookAttempt = Type.Object({
  number: Type.Integer({ description: '1 for the first attempt.' }),
  at: Time('When it was made'),
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null on error." }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it failed (timeout, refused address, connection error, non-2xx status); null when delivered.',
  }),
});

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'Delivery id (dlv_…).' }),
    event_id: Type.String({ description: 'The event id (evt_…), sent as webhook-id on every attempt.' }),
    event_type: Type.String(),
    event_created_at: Time('When the event happened'),
    status: StringEnum(DELIVERY_STATUSES, 'pending (next_retry_at says when), delivered, failed or skipped.'),
    next_retry_at: Type.Union([Time('When the next attempt is due'), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed or was skipped.' }),
    created_at: Time('Queued'),
    finished_at: Type.Union([Time('Delivered, failed or skipped'), Type.Null()]),
    attempts: Type.Array(WebhookAttempt),
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookTestResult = Type.Object(
  {
    delivery_id: Type.String({ description: 'The test delivery (see the deliveries list).' }),
    event_id: Type.String({ description: 'The webhook.test event (evt_…).' }),
  },
  { title: 'WebhookTestResult' },
);
