// What every profile's delinquency records share: the statuses that carry a tax certificate, certificate numbers and
// sale dates, and the terms of a certificate struck to the county (s. 197.432).
import { pad } from './format.ts';

/** Certificate-sold, struck and redeemed records carry a certificate (number, sale date, face, holder, rates). */
export const isCertified = (status: string | null) =>
  status === 'certificate_sold' || status === 'struck' || status === 'redeemed';

/** The n-th certificate of a tax year: `2024-000123`. */
export const certificateNumber = (year: number, n: number) => `${year}-${pad(n, 6)}`;

/** The certificate sale of a tax year's taxes, held around June 1 of the next year (`day`: `-MM-DD`). */
export const certificateSaleDate = (year: number, day = '-06-01') => `${year + 1}${day}`;

/** A certificate nobody bids on is struck to the county at the maximum rate. */
export const STRUCK_HOLDER = 'COUNTY HELD';
export const STRUCK_RATE = 18;
