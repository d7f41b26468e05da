// The roll-history MCP tool: a parcel's roll years with what changed, from the same query as
// GET /v1/parcels/{id}/history.
import { Type } from '@sinclair/typebox';
import { getParcelHistory } from '../queries/parcels.ts';
import { ParcelParams, ParcelRoll } from '../schemas/parcels.ts';
import { ObjectEnvelope } from '../schemas/common.ts';
import { notFound } from '../errors.ts';
import type { Tool } from './tools.ts';

const pct = (v: number | null) => (v === null ? '' : ` (${v > 0 ? '+' : ''}${v}%)`);

const Input = Type.Object({ id: ParcelParams.properties.id });

// (typed here rather than through tools.ts's defineTool: tools.ts imports this module, so its exports are not
// initialised yet while this one loads)
export const historyTools: Tool[] = [
  {
    name: 'get_parcel_history',
    title: "A parcel's roll history",
    description:
      'Every roll (assessment) year on file for one parcel by its `id`, newest first: owner and mailing address, DOR ' +
      'and appraiser use codes, just / assessed / taxable / land / building values in dollars, living area, exemption ' +
      'amounts by FDOR code, and against the roll year before: owner_changed, just_value_change_pct, use_code_changed, ' +
      'plus the recorded sales between the two rolls that explain an owner change. A parcel new this year has one row.',
    input: Input,
    output: ObjectEnvelope(Type.Array(ParcelRoll)),
    run: async ({ app }, { id }) => {
      const data = await getParcelHistory(app.sql, id);
      if (!data) throw notFound(`No parcel with id ${id}.`);
      const [latest] = data;
      const changes = data.filter((r) => r.owner_changed).map((r) => r.roll_year);
      return {
        structured: { data },
        summary:
          `${data.length} roll year${data.length === 1 ? '' : 's'}` +
          (latest
            ? `; ${latest.roll_year} just value $${(latest.just_value ?? 0).toLocaleString('en-US')}${pct(latest.just_value_change_pct)}`
            : '') +
          (changes.length ? `; owner changed in ${changes.join(', ')}.` : '; no owner change on file.'),
      };
    },
  } satisfies Tool<typeof Input> as unknown as Tool,
];
