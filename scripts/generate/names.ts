// Owner and street vocabularies with heavy-tailed (Zipf-like) frequencies: a ranked head of common names followed by
// a long tail of pronounceable generated names, each derived from its rank so rare names recur rarely but stably.
import { mix32, type Rng } from './prng.ts';

/** A word list written as text: `words('SMITH JONES')`. */
export const words = (text: string) => text.trim().split(/\s+/);
/** The same, each word once (at its first place). */
const unique = (text: string) => [...new Set(words(text))];

/** Most frequent US surnames first (census order, roughly). */
const ANGLO_SURNAMES = unique(`
SMITH JOHNSON WILLIAMS BROWN JONES MILLER DAVIS WILSON ANDERSON TAYLOR THOMAS MOORE JACKSON
MARTIN LEE THOMPSON WHITE HARRIS CLARK LEWIS ROBINSON WALKER YOUNG ALLEN KING WRIGHT SCOTT HILL GREEN ADAMS BAKER
NELSON HALL CAMPBELL MITCHELL CARTER ROBERTS PHILLIPS EVANS TURNER PARKER COLLINS EDWARDS STEWART MORRIS MURPHY COOK
ROGERS MORGAN COOPER PETERSON BAILEY REED KELLY HOWARD COX WARD RICHARDSON WATSON BROOKS WOOD JAMES BENNETT GRAY
HUGHES PRICE SANDERS PATEL NGUYEN MYERS LONG ROSS FOSTER POWELL JENKINS PERRY RUSSELL SULLIVAN BELL COLEMAN BUTLER
HENDERSON BARNES FISHER VASQUEZ SIMMONS GRAHAM MARSHALL OWENS HARRISON FERNANDEZ MCDONALD WOODS WASHINGTON KENNEDY
WELLS HAMILTON GRAHAM OBRIEN MURRAY FORD HAYES BOYD MASON JEAN PIERRE JOSEPH CHARLES LOUIS DESROSIERS KOWALSKI
SCHMIDT MUELLER OKAFOR FITZGERALD ABERNATHY MONTGOMERY HAVERKAMP ZELINSKY OYELARAN STRZELECKI`);

/** Most frequent Hispanic surnames first (heavy in Miami-Dade, Osceola, Hendry, Hardee). */
const HISPANIC_SURNAMES = unique(`
GARCIA RODRIGUEZ GONZALEZ HERNANDEZ LOPEZ MARTINEZ PEREZ SANCHEZ DIAZ FERNANDEZ RAMIREZ
TORRES GOMEZ ALVAREZ RUIZ SUAREZ RIVERA CRUZ MORALES REYES JIMENEZ CASTILLO ROMERO MENDEZ HERRERA MEDINA VARGAS CASTRO
ORTIZ GUTIERREZ RAMOS FLORES DELGADO VEGA MORENO AGUILAR PENA CABRERA LEON ROJAS ACOSTA MOLINA FIGUEROA SOTO NUNEZ
BLANCO CARDENAS QUINTERO VALDES BETANCOURT ESPINOSA PADRON QUINTANILLA VILLANUEVA BALDERRAMA ECHEVARRIA CESPEDES`);

const ANGLO_FIRST = words(`JOHN MARY JAMES ROBERT MICHAEL LINDA WILLIAM PATRICIA DAVID SUSAN RICHARD BARBARA JOSEPH
ELIZABETH THOMAS JENNIFER CHARLES MARGARET CHRISTOPHER DOROTHY DANIEL NANCY MATTHEW KAREN DONALD BETTY PAUL HELEN
MARK SANDRA GEORGE DONNA KENNETH CAROL STEVEN RUTH EDWARD SHARON BRIAN MICHELLE RONALD LAURA ANTHONY SARAH KEVIN
KIMBERLY JASON DEBORAH JEFFREY JESSICA GARY SHIRLEY TIMOTHY CYNTHIA LARRY ANGELA`);

const HISPANIC_FIRST = words(`JOSE MARIA JUAN ANA LUIS CARMEN CARLOS ROSA JORGE MARTHA MANUEL ELENA PEDRO GLORIA MIGUEL
TERESA FRANCISCO ISABEL ANTONIO YOLANDA RAFAEL LOURDES RAUL MARITZA ALEJANDRO DAYANA ERNESTO MAGALY ORLANDO
YAMILET ROBERTO MARISOL ARMANDO MIRTA RENE NILDA ALBERTO ODALYS`);

const SYLLABLES_START = [
  'B',
  'BR',
  'C',
  'CH',
  'D',
  'DR',
  'F',
  'G',
  'GR',
  'H',
  'K',
  'KR',
  'L',
  'M',
  'N',
  'P',
  'PR',
  'R',
];
const SYLLABLES_START2 = ['S', 'ST', 'SH', 'T', 'TR', 'V', 'W', 'Z', 'TH', 'GL', 'BL', 'QU'];
const VOWELS = ['A', 'E', 'I', 'O', 'U', 'AI', 'EA', 'OU', 'IE', 'AU'];
const MIDDLE = ['L', 'N', 'R', 'M', 'S', 'T', 'D', 'V', 'LL', 'NN', 'RR', 'ND', 'NT', 'RT', 'ST', 'SK', 'CK', 'LD'];
const ENDINGS = ['', 'ER', 'SON', 'TON', 'LEY', 'MAN', 'BERG', 'STEIN', 'WICZ', 'SKI', 'OV', 'ETTE', 'ELLI', 'AKIS'];
const HISPANIC_ENDINGS = ['EZ', 'ERO', 'ADO', 'ILLA', 'EDA', 'ONDO', 'ARES', 'ERA', 'INO', 'OSA'];
const ONSETS = [...SYLLABLES_START, ...SYLLABLES_START2];

/** A pronounceable made-up word, fixed for a given key: onset-vowel(-middle-vowel)-ending. */
function coined(key: number, hispanic: boolean): string {
  const h = mix32(key, hispanic ? 7 : 3);
  const a = ONSETS[h % ONSETS.length]!;
  const v1 = VOWELS[(h >>> 5) % VOWELS.length]!;
  const m = MIDDLE[(h >>> 9) % MIDDLE.length]!;
  const v2 = VOWELS[(h >>> 14) % 5]!; // single vowels only: keeps coined names pronounceable
  const ends = hispanic ? HISPANIC_ENDINGS : ENDINGS;
  const e = ends[(h >>> 18) % ends.length]!;
  const long = (h >>> 24) % 3 !== 0;
  return long ? `${a}${v1}${m}${v2}${e}` : `${a}${v1}${m}${e || v2}`;
}

/**
 * About 55% of owners carry a surname from the ranked head list (SMITH alone ~1.5%, as common names cluster), the rest
 * a coined name from a Zipf tail of 200,000 ranks: rare names recur, but rarely.
 */
const TAIL_RANKS = 200_000;

export function surname(r: Rng, hispanic: boolean): string {
  const head = hispanic ? HISPANIC_SURNAMES : ANGLO_SURNAMES;
  if (r.chance(hispanic ? 0.7 : 0.55)) return head[r.zipf(head.length, hispanic ? 8 : 20)]!;
  return coined(r.zipf(TAIL_RANKS, 50), hispanic);
}

export function firstName(r: Rng, hispanic: boolean): string {
  const list = hispanic ? HISPANIC_FIRST : ANGLO_FIRST;
  return list[r.zipf(list.length, 6)]!;
}

const STREET_HEAD = words(`MAIN OAK PALM PINE LAKE MAGNOLIA CYPRESS PARK CEDAR MAPLE ORANGE OCEAN BAY DIXIE FLAGLER
HIBISCUS MANGO JACARANDA POINCIANA SAWGRASS SEMINOLE TAMIAMI BISCAYNE CORAL WASHINGTON LINCOLN JEFFERSON MADISON
JACKSON RIVERSIDE SUNSET LAKEVIEW HILLCREST FOREST ELM WILLOW BIRCH HICKORY DOGWOOD AZALEA GARDENIA CAMELLIA
ORCHID FLAMINGO PELICAN HERON EGRET OSPREY DOLPHIN MARLIN TARPON CORAL REEF BANYAN SEAGRAPE GUMBO LIMBO
ROYAL PALM SABAL PALMETTO COCONUT KEY LIME ATLANTIC GULF INDIAN RIVER CITRUS GROVE COUNTRY CLUB GOLF VIEW
OLD DIXIE FEDERAL US HIGHWAY 1 STATE ROAD 7 COUNTY ROAD 44`)
  .reduce<string[]>((out, w) => {
    // Multi-word street names: join the known two-word names instead of splitting them.
    const pairs = [
      'CORAL REEF',
      'GUMBO LIMBO',
      'ROYAL PALM',
      'KEY LIME',
      'INDIAN RIVER',
      'CITRUS GROVE',
      'COUNTRY CLUB',
      'GOLF VIEW',
      'OLD DIXIE',
    ];
    const last = out[out.length - 1];
    if (last !== undefined && pairs.includes(`${last} ${w}`)) out[out.length - 1] = `${last} ${w}`;
    else out.push(w);
    return out;
  }, [])
  .filter((s, i, all) => all.indexOf(s) === i && !/^(US|HIGHWAY|STATE|ROAD|COUNTY|1|7|44)$/.test(s));

const ORDINAL = (n: number) =>
  `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'TH' : (['TH', 'ST', 'ND', 'RD'][n % 10] ?? 'TH')}`;

export const SUFFIXES: readonly [short: string, long: string][] = [
  ['ST', 'STREET'],
  ['AVE', 'AVENUE'],
  ['DR', 'DRIVE'],
  ['RD', 'ROAD'],
  ['BLVD', 'BOULEVARD'],
  ['LN', 'LANE'],
  ['CT', 'COURT'],
  ['TER', 'TERRACE'],
  ['PL', 'PLACE'],
  ['WAY', 'WAY'],
  ['CIR', 'CIRCLE'],
  ['TRL', 'TRAIL'],
  ['PKWY', 'PARKWAY'],
];
export const DIRECTIONS = ['N', 'S', 'E', 'W', 'NW', 'SW', 'NE', 'SE'];

/**
 * A street (name + suffix) for a county: numbered grid streets where the county has a grid (Miami-Dade's SW 8TH ST),
 * else a Zipf pick over named streets followed by coined names. `numbered` is the share of numbered streets.
 */
export function street(r: Rng, numbered: number): string {
  if (r.chance(numbered)) {
    const dir = r.pick(DIRECTIONS.slice(4));
    const n = 1 + r.zipf(400, 15);
    return `${dir} ${ORDINAL(n)} ${r.pick(['ST', 'AVE', 'CT', 'TER', 'PL', 'ST', 'AVE'])}`;
  }
  // 75% from the named head (Zipf within it: MAIN, OAK and PALM everywhere), the rest a coined long tail.
  const rank = r.chance(0.75) ? r.zipf(STREET_HEAD.length, 8) : STREET_HEAD.length + r.zipf(50_000, 20);
  const name = rank < STREET_HEAD.length ? STREET_HEAD[rank]! : coined(rank + 1_000_000, false);
  const [short] = SUFFIXES[mix32(rank, 11) % SUFFIXES.length]!;
  const dir = r.chance(0.15) ? `${r.pick(DIRECTIONS)} ` : '';
  return `${dir}${name} ${short}`;
}

/** The FDOR-style suffix variants: most rolls abbreviate, some spell out. */
const SPELL_OUT = SUFFIXES.filter(([short, long]) => short !== long).map(
  ([short, long]) => [new RegExp(` ${short}( |$)`), ` ${long}$1`] as const,
);
export function spellOut(address: string, r: Rng): string {
  if (!r.chance(0.12)) return address;
  for (const [re, long] of SPELL_OUT) if (re.test(address)) return address.replace(re, long);
  return address;
}

const BUSINESS_WORDS = words(`SUNSHINE CORAL BAYSIDE PALM GATOR ATLANTIC GULF MANGROVE EVERGLADES KEYSTONE SUNCOAST
TROPICAL HARBOR SEABREEZE CITRUS OSPREY PELICAN MAGNOLIA EMERALD TRIDENT PINNACLE SUMMIT LEGACY HERITAGE BLUEWATER
ORANGE BLOSSOM CYPRESS TIDEWATER`);
export const BUSINESS_KINDS = words('HOLDINGS PROPERTIES INVESTMENTS REALTY VENTURES CAPITAL GROUP ASSETS');
const BUSINESS_FORMS = ['LLC', 'LLC', 'LLC', 'INC', 'LP', 'LTD', 'CORP'];

export function businessName(r: Rng): string {
  // Real rolls mix family names (SMITH PROPERTIES LLC), invented words and a few very common place words.
  const form = r.next();
  const head =
    form < 0.35
      ? surname(r, r.chance(0.2))
      : form < 0.6
        ? coined(r.int(0, 5_000_000), false)
        : `${BUSINESS_WORDS[r.zipf(BUSINESS_WORDS.length, 6)]!}${r.chance(0.4) ? ` ${r.pick(BUSINESS_WORDS)}` : ''}`;
  const n = r.chance(0.2) ? ` ${r.int(1, 99)}` : '';
  return `${head}${n} ${r.pick(BUSINESS_KINDS)} ${r.pick(BUSINESS_FORMS)}`;
}

const CHARITY_KINDS = ['FOUNDATION INC', 'MINISTRIES INC', 'COMMUNITY SERVICES INC', 'CHARITIES INC', 'LODGE INC'];

/** Exempt non-profit owners: a family or place name and a charitable form. */
export function charityName(r: Rng): string {
  const head = r.chance(0.5) ? surname(r, false) : BUSINESS_WORDS[r.zipf(BUSINESS_WORDS.length, 6)]!;
  return `${head} ${r.pick(CHARITY_KINDS)}`;
}

/** Large single-family-rental and institutional owners that hold portfolios across many counties (fictitious). */
export const PORTFOLIO_OWNERS = [
  'SFR FLORIDA BORROWER LLC',
  'SUNBELT HOMES 2 LP',
  'HOME PARTNERS OF FLORIDA LLC',
  'PROGRESS RESIDENTIAL BORROWER 9 LLC',
  'FIRSTKEY FL PROPERTIES LLC',
  'TRICOUNTY RENTAL HOLDINGS LLC',
  'ATLANTIC COAST SFR I LLC',
  'GULFSTREAM HOUSING TRUST',
  'PALMETTO RENTAL PORTFOLIO LLC',
  'AMERICAN HOMES 4 RENT PROPERTIES FL LLC',
  'FEDERAL NATIONAL MORTGAGE ASSOCIATION',
  'US BANK TRUST NA TR',
  'WILMINGTON SAVINGS FUND SOCIETY FSB TR',
  'LENNAR HOMES LLC',
  'D R HORTON INC',
  'PULTE HOME COMPANY LLC',
  'TAYLOR MORRISON OF FLORIDA INC',
];

/** Certificate buyers at the tax-certificate sales (fictitious, in the style of real bidder names). */
export const CERTIFICATE_HOLDERS = [
  'CAPITAL ONE CP AS CUST',
  '5T WEALTH PARTNERS LP',
  'TLGFY LLC',
  'BRIDGE TAX LLC',
  'FIG AS CUST FOR FIGSNC',
  'MTAG CUST FOR ALTERNA FUNDING',
  'ATCF II FLORIDA LLC',
  'TC 19 LLC',
  'BRAVO TAX LIEN FUND LP',
  'ELLIOTT TAX CERT FUND LLC',
  'KEYS TAX CERTIFICATE TRUST',
  'FLORIDA TAX LIEN ASSETS IV LLC',
  'RMC TAX LIEN FUND LLC',
  'SUNSHINE STATE CERTIFICATES II LLC',
  'GULF COAST LIEN INVESTORS LP',
];

export const LEGAL_WORDS = words(`ESTATES SUBDIVISION PARK HEIGHTS GARDENS ACRES MANOR VILLAS SHORES POINTE LAKES OAKS
ISLES HAMMOCK GROVES RIDGE`);
export const SUBDIVISION_WORDS = BUSINESS_WORDS;
