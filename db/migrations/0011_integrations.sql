-- Integrations and their webhook deliveries (issue 9). Deliveries are a
-- queue in the database, written in the same transaction as the change
-- they report, so none is lost to a crash or a restart.
CREATE TABLE integrations (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    item_type TEXT NOT NULL,
    provider TEXT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT 1,
    url TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX integrations_organisation ON integrations(organisation_id, item_type);

CREATE TABLE integration_deliveries (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    integration_id INTEGER NOT NULL REFERENCES integrations(id),
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    response_code INTEGER,
    last_error TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    delivered_at TEXT
);
CREATE INDEX integration_deliveries_due ON integration_deliveries(status, next_attempt_at);
CREATE INDEX integration_deliveries_integration ON integration_deliveries(integration_id, id);
