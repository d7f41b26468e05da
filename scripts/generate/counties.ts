// The 67 counties as the generator sees them: FDOR CO_NO and slug (florida.md 2), the certificate-sale vendor (the
// counties-reference migration), an approximate real parcel count, an approximate centroid on land for the polygon
// block, local cities with ZIP codes, PLSS township/range bases and the local parcel-id style (florida.md 5).

export type IdStyle =
  | 'miami-dade'
  | 'broward'
  | 'palm-beach'
  | 'hillsborough'
  | 'orange'
  | 'pinellas'
  | 'polk'
  | 'seminole'
  | 'lee'
  | 'collier'
  | 'account10'
  | 'strap'
  | 'dashed';

export interface CountyDef {
  coNo: number;
  name: string;
  slug: string;
  vendor: string;
  /** Approximate real parcel count (order of magnitude, see generatorCounts); scaled to PARCELS. */
  parcels: number;
  lat: number;
  lng: number;
  /** Width / height of the polygon block, for long thin counties (Pinellas, Brevard). */
  aspect: number;
  idStyle: IdStyle;
  /** PLSS township and range of the county's first "section region", e.g. 54S / 40E for Miami-Dade. */
  twp: number;
  twpDir: 'N' | 'S';
  rng: number;
  rngDir: 'E' | 'W';
  /** Multiplier on statewide base values (coastal metros above 1, rural counties below). */
  value: number;
  /** Shares of owners drawn from Hispanic name lists, of condo subdivisions, vacant-lot and rural subdivisions. */
  hispanic: number;
  condo: number;
  vacant: number;
  rural: number;
  cities: [city: string, zip: string][];
}

// One line per county: CO_NO|name|vendor|parcels|lat|lng|aspect|style|twp|rng|value|hispanic|condo|vacant|rural|cities
// Parcel counts are approximate (general knowledge of county rolls around 2023, anchored to florida.md 3: Miami-Dade
// ~0.9M+, Palm Beach >0.5M, Hillsborough 530k, Orange ~450k+); generatorCounts() rescales them to any total.
// Centroids are approximate and deliberately on the populated land part of each county (Monroe: mainland Everglades,
// since the Keys are too narrow for a block; Broward and Palm Beach: east of the Everglades conservation areas).
const TABLE = `
11|Alachua|LienHub|118000|29.66|-82.36|1|account10|9S|19E|0.8|0.1|0.05|0.06|0.15|GAINESVILLE 32601;GAINESVILLE 32608;GAINESVILLE 32605;ALACHUA 32615;HIGH SPRINGS 32643;NEWBERRY 32669
12|Baker|TaxCertSale|13500|30.33|-82.28|1|dashed|2S|21E|0.5|0.04|0|0.08|0.45|MACCLENNY 32063;GLEN SAINT MARY 32040;SANDERSON 32087
13|Bay|LienHub|130000|30.24|-85.60|1|strap|3S|14W|0.9|0.06|0.1|0.08|0.15|PANAMA CITY 32401;PANAMA CITY 32405;LYNN HAVEN 32444;PANAMA CITY BEACH 32407;CALLAWAY 32404
14|Bradford|Tax collector|15500|29.95|-82.17|1|dashed|6S|21E|0.5|0.04|0|0.08|0.45|STARKE 32091;LAWTEY 32058;HAMPTON 32044
15|Brevard|LienHub|345000|28.22|-80.80|0.35|strap|25S|36E|0.95|0.1|0.1|0.1|0.06|MELBOURNE 32901;PALM BAY 32907;TITUSVILLE 32780;COCOA 32922;ROCKLEDGE 32955;MERRITT ISLAND 32953
16|Broward|LienHub|760000|26.14|-80.26|0.8|broward|49S|41E|1.1|0.3|0.3|0.03|0.01|FORT LAUDERDALE 33301;FORT LAUDERDALE 33308;HOLLYWOOD 33019;POMPANO BEACH 33062;PEMBROKE PINES 33024;CORAL SPRINGS 33065;MIRAMAR 33025;DAVIE 33314;PLANTATION 33324
17|Calhoun|TaxCertSale|9500|30.41|-85.19|1|dashed|1N|9W|0.45|0.04|0|0.08|0.5|BLOUNTSTOWN 32424;ALTHA 32421
18|Charlotte|LienHub|215000|26.93|-81.92|1|strap|40S|22E|0.8|0.08|0.06|0.35|0.05|PORT CHARLOTTE 33948;PORT CHARLOTTE 33952;PUNTA GORDA 33950;ENGLEWOOD 34224;ROTONDA WEST 33947
19|Citrus|LienHub|145000|28.85|-82.45|1|strap|18S|18E|0.6|0.06|0.03|0.25|0.12|INVERNESS 34450;CRYSTAL RIVER 34429;HOMOSASSA 34446;BEVERLY HILLS 34465;HERNANDO 34442
20|Clay|LienHub|95000|29.98|-81.85|1|strap|5S|25E|0.8|0.08|0.02|0.07|0.15|ORANGE PARK 32073;MIDDLEBURG 32068;GREEN COVE SPRINGS 32043;FLEMING ISLAND 32003;KEYSTONE HEIGHTS 32656
21|Collier|LienHub|255000|26.15|-81.62|1|collier|49S|26E|1.6|0.28|0.25|0.1|0.08|NAPLES 34102;NAPLES 34116;NAPLES 34120;IMMOKALEE 34142;MARCO ISLAND 34145
22|Columbia|RealTaxLien|42000|30.20|-82.64|1|dashed|4S|16E|0.55|0.05|0|0.08|0.4|LAKE CITY 32025;LAKE CITY 32055;FORT WHITE 32038
23|Miami-Dade|LienHub|940000|25.64|-80.45|0.9|miami-dade|54S|40E|1.25|0.68|0.38|0.03|0.02|MIAMI 33130;MIAMI 33145;MIAMI 33157;MIAMI 33186;HIALEAH 33010;HIALEAH 33012;MIAMI BEACH 33139;HOMESTEAD 33030;DORAL 33178;CORAL GABLES 33134;UNINCORPORATED 33196
24|DeSoto|TaxCertSale|28000|27.19|-81.81|1|dashed|37S|24E|0.5|0.3|0.01|0.1|0.4|ARCADIA 34266;ARCADIA 34269;NOCATEE 34268
25|Dixie|RealTaxLien|17500|29.58|-83.18|1|dashed|10S|12E|0.45|0.03|0|0.15|0.45|CROSS CITY 32628;OLD TOWN 32680;HORSESHOE BEACH 32648
26|Duval|LienHub|395000|30.33|-81.80|1|account10|2S|26E|0.85|0.1|0.05|0.05|0.03|JACKSONVILLE 32205;JACKSONVILLE 32210;JACKSONVILLE 32244;JACKSONVILLE 32246;JACKSONVILLE 32218;JACKSONVILLE BEACH 32250
27|Escambia|LienHub|155000|30.55|-87.30|1|strap|1S|31W|0.7|0.05|0.04|0.08|0.12|PENSACOLA 32501;PENSACOLA 32503;PENSACOLA 32526;CANTONMENT 32533;CENTURY 32535
28|Flagler|LienHub|80000|29.47|-81.30|1|strap|11S|31E|0.85|0.1|0.05|0.2|0.1|PALM COAST 32137;PALM COAST 32164;BUNNELL 32110;FLAGLER BEACH 32136
29|Franklin|TaxCertSale|18500|29.85|-84.75|1|dashed|7S|5W|0.9|0.03|0.03|0.15|0.3|APALACHICOLA 32320;EASTPOINT 32328;CARRABELLE 32322
30|Gadsden|RealTaxLien|28000|30.58|-84.61|1|dashed|2N|4W|0.45|0.08|0|0.08|0.45|QUINCY 32351;HAVANA 32333;CHATTAHOOCHEE 32324
31|Gilchrist|RealTaxLien|12500|29.72|-82.80|1|dashed|9S|15E|0.5|0.04|0|0.08|0.5|TRENTON 32693;BELL 32619
32|Glades|TaxCertSale|21000|26.95|-81.20|1|dashed|41S|31E|0.45|0.15|0|0.2|0.45|MOORE HAVEN 33471;LAKEPORT 33471;PALMDALE 33944
33|Gulf|TaxCertSale|18000|29.95|-85.22|1|dashed|5S|10W|0.8|0.03|0.02|0.15|0.3|PORT SAINT JOE 32456;WEWAHITCHKA 32465
34|Hamilton|TaxCertSale|11000|30.49|-82.95|1|dashed|1N|14E|0.4|0.05|0|0.08|0.5|JASPER 32052;JENNINGS 32053;WHITE SPRINGS 32096
35|Hardee|TaxCertSale|16500|27.49|-81.81|1|dashed|34S|24E|0.5|0.45|0|0.08|0.45|WAUCHULA 33873;BOWLING GREEN 33834;ZOLFO SPRINGS 33890
36|Hendry|Tax collector|43000|26.55|-81.15|1|dashed|44S|30E|0.5|0.5|0|0.2|0.35|LABELLE 33935;CLEWISTON 33440;FELDA 33930
37|Hernando|LienHub|115000|28.55|-82.42|1|strap|22S|19E|0.7|0.1|0.02|0.12|0.1|BROOKSVILLE 34601;SPRING HILL 34606;SPRING HILL 34608;WEEKI WACHEE 34613
38|Highlands|Tax collector|105000|27.34|-81.34|1|dashed|36S|29E|0.55|0.2|0.03|0.25|0.2|SEBRING 33870;SEBRING 33875;AVON PARK 33825;LAKE PLACID 33852
39|Hillsborough|LienHub|530000|28.00|-82.28|1|hillsborough|29S|19E|1|0.28|0.1|0.05|0.04|TAMPA 33602;TAMPA 33606;TAMPA 33610;TAMPA 33647;BRANDON 33511;PLANT CITY 33563;RIVERVIEW 33569;UNINCORPORATED 33594
40|Holmes|TaxCertSale|13000|30.87|-85.81|1|dashed|5N|15W|0.4|0.03|0|0.08|0.5|BONIFAY 32425;PONCE DE LEON 32455;WESTVILLE 32464
41|Indian River|LienHub|98000|27.66|-80.50|1|strap|32S|38E|1.05|0.1|0.12|0.08|0.08|VERO BEACH 32960;VERO BEACH 32966;SEBASTIAN 32958;FELLSMERE 32948
42|Jackson|TaxCertSale|36000|30.80|-85.22|1|dashed|5N|10W|0.45|0.04|0|0.08|0.45|MARIANNA 32446;GRACEVILLE 32440;SNEADS 32460
43|Jefferson|TaxCertSale|11500|30.42|-83.90|1|dashed|1N|4E|0.5|0.03|0|0.08|0.5|MONTICELLO 32344;LAMONT 32336
44|Lafayette|RealTaxLien|6200|30.00|-83.20|1|dashed|6S|11E|0.45|0.05|0|0.08|0.55|MAYO 32066;DAY 32013
45|Lake|LienHub|210000|28.75|-81.72|1|strap|19S|26E|0.85|0.15|0.04|0.1|0.1|CLERMONT 34711;LEESBURG 34748;TAVARES 32778;EUSTIS 32726;MOUNT DORA 32757;THE VILLAGES 32162
46|Lee|LienHub|560000|26.60|-81.78|1|lee|45S|24E|0.9|0.22|0.15|0.15|0.04|FORT MYERS 33901;FORT MYERS 33913;CAPE CORAL 33904;CAPE CORAL 33914;LEHIGH ACRES 33971;BONITA SPRINGS 34135;ESTERO 33928
47|Leon|WFBS|120000|30.46|-84.28|1|strap|1N|1E|0.8|0.06|0.05|0.05|0.12|TALLAHASSEE 32301;TALLAHASSEE 32303;TALLAHASSEE 32308;TALLAHASSEE 32312;WOODVILLE 32305
48|Levy|WFBS|47000|29.28|-82.78|1|dashed|12S|16E|0.5|0.05|0|0.2|0.4|WILLISTON 32696;CHIEFLAND 32626;BRONSON 32621;CEDAR KEY 32625
49|Liberty|TaxCertSale|6500|30.24|-84.88|1|dashed|1S|7W|0.4|0.03|0|0.1|0.55|BRISTOL 32321;HOSFORD 32334
50|Madison|TaxCertSale|14500|30.45|-83.47|1|dashed|1N|9E|0.4|0.04|0|0.08|0.5|MADISON 32340;GREENVILLE 32331;LEE 32059
51|Manatee|Pacific Blue|200000|27.45|-82.45|1|strap|34S|19E|1.05|0.15|0.12|0.08|0.08|BRADENTON 34205;BRADENTON 34208;BRADENTON 34212;PALMETTO 34221;LAKEWOOD RANCH 34202;PARRISH 34219
52|Marion|WFBS|265000|29.20|-82.10|1|strap|15S|22E|0.65|0.1|0.02|0.3|0.15|OCALA 34470;OCALA 34472;OCALA 34481;DUNNELLON 34431;BELLEVIEW 34420;OCKLAWAHA 32179
53|Martin|LienHub|82000|27.10|-80.35|1|strap|38S|40E|1.3|0.1|0.15|0.06|0.08|STUART 34994;STUART 34997;PALM CITY 34990;JUPITER 33458;HOBE SOUND 33455
54|Monroe|LienHub|72000|25.55|-81.00|1|strap|58S|34E|2|0.25|0.1|0.08|0.02|KEY WEST 33040;KEY LARGO 33037;MARATHON 33050;ISLAMORADA 33036;BIG PINE KEY 33043
55|Nassau|LienHub|58000|30.60|-81.77|1|account10|3N|26E|0.95|0.05|0.06|0.08|0.2|FERNANDINA BEACH 32034;YULEE 32097;CALLAHAN 32011;HILLIARD 32046
56|Okaloosa|LienHub|115000|30.72|-86.57|1|account10|3N|24W|0.95|0.07|0.1|0.06|0.1|CRESTVIEW 32536;FORT WALTON BEACH 32547;NICEVILLE 32578;DESTIN 32541
57|Okeechobee|TaxCertSale|32000|27.38|-80.90|1|dashed|37S|35E|0.5|0.3|0|0.12|0.4|OKEECHOBEE 34972;OKEECHOBEE 34974
58|Orange|LienHub|480000|28.50|-81.35|1|orange|22S|29E|1|0.32|0.12|0.04|0.03|ORLANDO 32801;ORLANDO 32803;ORLANDO 32825;ORLANDO 32835;WINTER PARK 32789;APOPKA 32703;OCOEE 34761;WINTER GARDEN 34787
59|Osceola|LienHub|200000|28.15|-81.25|1|strap|26S|30E|0.85|0.5|0.08|0.08|0.08|KISSIMMEE 34741;KISSIMMEE 34746;KISSIMMEE 34758;SAINT CLOUD 34769;CELEBRATION 34747
60|Palm Beach|RealTaxLien|650000|26.62|-80.20|1|palm-beach|44S|42E|1.3|0.23|0.27|0.04|0.03|WEST PALM BEACH 33401;WEST PALM BEACH 33411;BOCA RATON 33432;BOCA RATON 33434;JUPITER 33458;DELRAY BEACH 33444;BOYNTON BEACH 33436;WELLINGTON 33414;UNINCORPORATED 33467
61|Pasco|LienHub|290000|28.33|-82.45|1|strap|25S|18E|0.8|0.15|0.05|0.1|0.08|NEW PORT RICHEY 34652;HUDSON 34667;WESLEY CHAPEL 33544;ZEPHYRHILLS 33542;LAND O LAKES 34639;DADE CITY 33525
62|Pinellas|LienHub|430000|27.90|-82.72|0.4|pinellas|30S|16E|1.05|0.1|0.22|0.03|0.01|SAINT PETERSBURG 33701;SAINT PETERSBURG 33710;CLEARWATER 33755;CLEARWATER 33763;LARGO 33770;PINELLAS PARK 33781;DUNEDIN 34698;TARPON SPRINGS 34689
63|Polk|RealTaxLien|335000|28.00|-81.75|1|polk|28S|25E|0.75|0.25|0.04|0.12|0.12|LAKELAND 33801;LAKELAND 33810;WINTER HAVEN 33880;HAINES CITY 33844;BARTOW 33830;DAVENPORT 33837;LAKE WALES 33853
64|Putnam|RealTaxLien|68000|29.62|-81.75|1|strap|10S|25E|0.5|0.08|0|0.2|0.3|PALATKA 32177;INTERLACHEN 32148;CRESCENT CITY 32112;EAST PALATKA 32131
65|St. Johns|Tax collector|160000|29.90|-81.45|1|account10|7S|29E|1.3|0.08|0.08|0.06|0.08|SAINT AUGUSTINE 32080;SAINT AUGUSTINE 32084;SAINT AUGUSTINE 32092;PONTE VEDRA BEACH 32082;SAINT JOHNS 32259
66|St. Lucie|LienHub|250000|27.30|-80.45|1|strap|36S|39E|0.8|0.2|0.08|0.15|0.05|PORT SAINT LUCIE 34952;PORT SAINT LUCIE 34953;PORT SAINT LUCIE 34986;FORT PIERCE 34950;FORT PIERCE 34982
67|Santa Rosa|LienHub|105000|30.68|-87.00|1|strap|1N|28W|0.85|0.05|0.03|0.1|0.15|MILTON 32570;MILTON 32583;NAVARRE 32566;GULF BREEZE 32563;PACE 32571
68|Sarasota|RealTaxLien|290000|27.22|-82.38|1|account10|37S|19E|1.2|0.08|0.18|0.12|0.04|SARASOTA 34231;SARASOTA 34232;SARASOTA 34240;VENICE 34293;NORTH PORT 34286;ENGLEWOOD 34223
69|Seminole|LienHub|175000|28.70|-81.25|1|seminole|20S|30E|1|0.2|0.08|0.03|0.04|SANFORD 32771;OVIEDO 32765;ALTAMONTE SPRINGS 32701;LONGWOOD 32750;WINTER SPRINGS 32708;LAKE MARY 32746
70|Sumter|LienHub|95000|28.82|-82.05|1|strap|19S|22E|0.85|0.05|0.02|0.08|0.2|THE VILLAGES 32162;THE VILLAGES 32163;WILDWOOD 34785;BUSHNELL 33513;WEBSTER 33597
71|Suwannee|RealTaxLien|32000|30.19|-82.99|1|dashed|3S|13E|0.45|0.05|0|0.08|0.45|LIVE OAK 32064;LIVE OAK 32060;WELLBORN 32094;BRANFORD 32008
72|Taylor|RealTaxLien|19000|30.05|-83.60|1|dashed|5S|7E|0.45|0.03|0|0.12|0.45|PERRY 32347;STEINHATCHEE 32359
73|Union|In person|6000|30.04|-82.37|1|dashed|5S|19E|0.45|0.04|0|0.08|0.5|LAKE BUTLER 32054;WORTHINGTON SPRINGS 32697
74|Volusia|LienHub|320000|29.05|-81.15|0.7|account10|16S|31E|0.85|0.12|0.1|0.1|0.06|DAYTONA BEACH 32114;DAYTONA BEACH 32117;DELAND 32720;DELTONA 32725;DELTONA 32738;ORMOND BEACH 32174;PORT ORANGE 32127;NEW SMYRNA BEACH 32168
75|Wakulla|TaxCertSale|23000|30.15|-84.38|1|dashed|3S|2W|0.6|0.03|0|0.12|0.3|CRAWFORDVILLE 32327;SOPCHOPPY 32358;PANACEA 32346
76|Walton|LienHub|80000|30.60|-86.17|1|dashed|2N|19W|1.5|0.05|0.12|0.12|0.15|DEFUNIAK SPRINGS 32433;SANTA ROSA BEACH 32459;MIRAMAR BEACH 32550;FREEPORT 32439
77|Washington|TaxCertSale|23000|30.60|-85.66|1|dashed|3N|13W|0.45|0.04|0|0.12|0.45|CHIPLEY 32428;VERNON 32462;WAUSAU 32463
`;

/** The shared slug rule (florida.md 2): lowercase, drop periods, non-alphanumerics to '-'. */
export const slugOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/\./g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

function parsePlss(text: string): [number, string] {
  const m = /^(\d+)([NSEW])$/.exec(text);
  if (!m) throw new Error(`bad PLSS value ${text}`);
  return [Number(m[1]), m[2]!];
}

export const COUNTIES: readonly CountyDef[] = TABLE.trim()
  .split('\n')
  .map((line) => {
    const f = line.split('|');
    if (f.length !== 16) throw new Error(`county table: ${f.length} fields in ${line}`);
    const [twp, twpDir] = parsePlss(f[8]!);
    const [rng, rngDir] = parsePlss(f[9]!);
    return {
      coNo: Number(f[0]),
      name: f[1]!,
      slug: slugOf(f[1]!),
      vendor: f[2]!,
      parcels: Number(f[3]),
      lat: Number(f[4]),
      lng: Number(f[5]),
      aspect: Number(f[6]),
      idStyle: f[7] as IdStyle,
      twp,
      twpDir: twpDir as 'N' | 'S',
      rng,
      rngDir: rngDir as 'E' | 'W',
      value: Number(f[10]),
      hispanic: Number(f[11]),
      condo: Number(f[12]),
      vacant: Number(f[13]),
      rural: Number(f[14]),
      cities: f[15]!.split(';').map((c) => {
        const at = c.lastIndexOf(' ');
        return [c.slice(0, at), c.slice(at + 1)] as [string, string];
      }),
    };
  });

/** The county with FDOR number `coNo`; core.counties ids are CO_NO - 10 (the revenue-department number). */
export function countyByCoNo(coNo: number): CountyDef {
  const c = COUNTIES.find((x) => x.coNo === coNo);
  if (!c) throw new Error(`no county with CO_NO ${coNo}`);
  return c;
}

/** Statewide total the full scale aims at: the FGDL 2023 feature count (florida.md 3). */
export const FULL_STATE_PARCELS = 10_803_218;
/** Even the smallest county gets a few parcels at tiny scales, so every county has every file. */
export const MIN_PARCELS_PER_COUNTY = 5;

/**
 * Parcels per county for a statewide total: proportional to the approximate real counts, at least
 * MIN_PARCELS_PER_COUNTY each, summing exactly to `total` (largest remainders) whenever total allows the minimum.
 */
export function generatorCounts(total: number): Map<number, number> {
  const real = COUNTIES.reduce((n, c) => n + c.parcels, 0);
  const shares = COUNTIES.map((c) => {
    const exact = (c.parcels / real) * total;
    return { c, exact, n: Math.max(MIN_PARCELS_PER_COUNTY, Math.floor(exact)) };
  });
  let left = total - shares.reduce((n, s) => n + s.n, 0);
  const byRemainder = [...shares].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)));
  for (let i = 0; left > 0; i = (i + 1) % byRemainder.length, left--) byRemainder[i]!.n++;
  // Over budget only when the minimum forced it: take back from the largest counties.
  const bySize = [...shares].sort((a, b) => b.n - a.n);
  for (let i = 0; left < 0 && bySize[i % bySize.length]!.n > MIN_PARCELS_PER_COUNTY; i++, left++) {
    bySize[i % bySize.length]!.n--;
  }
  return new Map(shares.map((s) => [s.c.coNo, s.n]));
}
