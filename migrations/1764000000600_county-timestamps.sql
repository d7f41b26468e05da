-- Up Migration
-- A county's row is never changed, nor imported into, before it was created. The reference rows carry a fixed
-- creation time, and an import may be dated earlier (the fixtures' load is): the earliest of the three times is then
-- the creation time, so createdAt <= updatedAt and createdAt <= lastImportAt always hold, checked by the constraint.
CREATE FUNCTION core.counties_created_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.created_at := least(NEW.created_at, NEW.updated_at, NEW.last_import_at);
  RETURN NEW;
END $$;
COMMENT ON FUNCTION core.counties_created_first() IS
  'Trigger of core.counties: created_at becomes the earliest of created_at, updated_at and last_import_at.';
CREATE TRIGGER counties_created_first BEFORE INSERT OR UPDATE ON core.counties
  FOR EACH ROW EXECUTE FUNCTION core.counties_created_first();

UPDATE core.counties SET created_at = least(created_at, updated_at, last_import_at)
 WHERE created_at > least(updated_at, last_import_at);
ALTER TABLE core.counties ADD CONSTRAINT counties_created_first
  CHECK (created_at <= updated_at AND created_at <= coalesce(last_import_at, created_at));

-- Down Migration
ALTER TABLE core.counties DROP CONSTRAINT counties_created_first;
DROP TRIGGER counties_created_first ON core.counties;
DROP FUNCTION core.counties_created_first();
