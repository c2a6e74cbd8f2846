-- name: CreateRuleSet :one
INSERT INTO payee_rule_sets (source, loaded_at) VALUES ($1, $2)
RETURNING id;

-- name: AddRuleCountry :exec
INSERT INTO payee_rule_countries (set_id, country_code, country_name, bank_identifier_type, mandatory_fields, optional_fields)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: AddRuleCurrency :exec
INSERT INTO payee_rule_currencies (set_id, country_code, payout_currency, account, documents_allowed)
VALUES ($1, $2, $3, $4, $5);

-- name: CurrentRuleSet :one
SELECT coalesce(max(id), 0)::bigint FROM payee_rule_sets;

-- name: GetRuleCountry :one
SELECT * FROM payee_rule_countries
WHERE set_id = (SELECT max(id) FROM payee_rule_sets) AND country_code = $1;

-- name: GetPayeeRules :one
SELECT sqlc.embed(payee_rule_countries), payee_rule_currencies.account, payee_rule_currencies.documents_allowed
FROM payee_rule_countries
JOIN payee_rule_currencies USING (set_id, country_code)
WHERE payee_rule_countries.set_id = (SELECT max(id) FROM payee_rule_sets)
  AND payee_rule_countries.country_code = sqlc.arg(country_code)
  AND payee_rule_currencies.payout_currency = sqlc.arg(payout_currency);
