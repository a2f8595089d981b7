DROP VIEW IF EXISTS lakesoul.subscriptions;
DROP FUNCTION IF EXISTS lakesoul.cdc_claim(text, bigint);
DROP FUNCTION IF EXISTS lakesoul.cdc_renew(text, uuid, bigint);
DROP FUNCTION IF EXISTS lakesoul.cdc_release(text, uuid, text);
DROP FUNCTION IF EXISTS lakesoul.cdc_commit(text, uuid, text, text, jsonb, jsonb, text, uuid, text, timestamptz);
DROP FUNCTION IF EXISTS lakesoul.cdc_set_state(text, uuid, text, text, text);
DROP TABLE IF EXISTS lakesoul.subscription_table;
DROP TABLE IF EXISTS lakesoul.subscription;
