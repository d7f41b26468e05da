-- Up Migration
-- A county's delinquency search in the default order (amount due) without a tax year reads its page from this index.
-- Without it, no index gave a county's records in that order: the planner walked the statewide amount-due index and
-- filtered out every other county, or sorted all of the county's matches, whichever it guessed cheaper (a small
-- county's first page: 80-310 ms at full state). The partial index on open certificates stays for deed_eligible.
CREATE INDEX tax_delinquencies_county_due_idx ON core.tax_delinquencies (county_id, total_due DESC NULLS LAST, id);

-- Down Migration
DROP INDEX core.tax_delinquencies_county_due_idx;
