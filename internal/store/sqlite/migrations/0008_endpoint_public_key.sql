-- 0008: ed25519 signatures (Standard Webhooks v1a). An endpoint created with
-- "signature": "ed25519" holds an ed25519 private key (whsk_), sealed in secret_sealed as
-- a v1 secret (whsec_) is, and public_key is its public key (whpk_), shown in the API; a
-- NULL public_key is an endpoint signing v1. After a rotation, or a switch between the
-- two kinds, previous_secret_sealed keeps signing beside the new key until previous_until.
ALTER TABLE webhook_endpoints ADD COLUMN public_key TEXT;
