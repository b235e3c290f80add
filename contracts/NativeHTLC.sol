// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/**
 * @title NativeHTLC
 * @notice Hash time-locked contract for the chain's native coin (ether), the counterpart of `HTLC`: same
 * order id, checks, events and EIP-712 domain. Payouts go to the order's recorded addresses via
 * `Address.sendValue` (all gas forwarded, so smart-wallet recipients work), never to the caller.
 * @dev There is no `initiateWithSignature`: ether cannot be pulled from a signer the way approved ERC-20
 * tokens can, so whoever initiates must send the ether with the call. Plain ether transfers are rejected
 * (no receive function).
 */
contract NativeHTLC is EIP712("HTLC", "3") {
    struct Order {
        address initiator;
        address redeemer;
        uint256 initiatedAt;
        uint256 timelock;
        uint256 amount;
        uint256 fulfilledAt;
    }

    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 orderId)");

    /// @notice Orders by id. An order is initiated when `initiator` is set and settled when `fulfilledAt` is.
    mapping(bytes32 => Order) public orders;

    event Initiated(bytes32 indexed orderID, bytes32 indexed secretHash, uint256 indexed amount);
    event Redeemed(bytes32 indexed orderID, bytes32 indexed secretHash, bytes secret);
    event Refunded(bytes32 indexed orderID);

    error NativeHTLC__ZeroAddressRedeemer();
    error NativeHTLC__ZeroAddressInitiator();
    error NativeHTLC__ZeroTimelock();
    error NativeHTLC__ZeroAmount();
    error NativeHTLC__SameInitiatorAndRedeemer();
    error NativeHTLC__SameFunderAndRedeemer();
    error NativeHTLC__IncorrectFundsReceived();
    error NativeHTLC__DuplicateOrder();
    error NativeHTLC__InvalidSecretLength();
    error NativeHTLC__OrderNotInitiated();
    error NativeHTLC__OrderFulfilled();
    error NativeHTLC__IncorrectSecret();
    error NativeHTLC__OrderNotExpired();
    error NativeHTLC__InvalidRedeemerSignature();

    /**
     * @notice Locks `msg.value` (which must equal `amount`) for an order initiated by the caller.
     * @param redeemer Who receives the ether against the secret.
     * @param timelock Blocks after initiation from which (exclusive) the initiator may refund.
     * @param amount The ether locked, in wei; must equal `msg.value`.
     * @param secretHash sha256 of the 32-byte secret.
     */
    function initiate(address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash) external payable {
        _initiate(msg.sender, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Locks `msg.value` (which must equal `amount`) for an order whose initiator is `initiator` (it
     * gets any refund). The funder is not part of the order id and must not be the redeemer.
     */
    function initiateOnBehalf(address initiator, address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash)
        external
        payable
    {
        if (msg.sender == redeemer) revert NativeHTLC__SameFunderAndRedeemer();
        _initiate(initiator, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Pays the order's redeemer against the secret. Anyone may call.
     * @param secret The 32-byte preimage of the order's secret hash; it is published in `Redeemed`.
     */
    function redeem(bytes32 orderID, bytes calldata secret) external {
        if (secret.length != 32) revert NativeHTLC__InvalidSecretLength();
        Order storage order = _openOrder(orderID);
        bytes32 secretHash = sha256(secret);
        if (_orderId(secretHash, order.initiator, order.redeemer, order.timelock, order.amount) != orderID) {
            revert NativeHTLC__IncorrectSecret();
        }
        order.fulfilledAt = block.number;
        emit Redeemed(orderID, secretHash, secret);
        Address.sendValue(payable(order.redeemer), order.amount);
    }

    /**
     * @notice Returns the ether to the initiator once the timelock has passed, i.e. from block
     * `initiatedAt + timelock + 1` on. Anyone may call.
     */
    function refund(bytes32 orderID) external {
        Order storage order = _openOrder(orderID);
        // Same as `initiatedAt + timelock < block.number`, without overflow for huge timelocks.
        if (block.number - order.initiatedAt <= order.timelock) revert NativeHTLC__OrderNotExpired();
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        Address.sendValue(payable(order.initiator), order.amount);
    }

    /**
     * @notice Returns the ether to the initiator before the timelock, with the redeemer's consent: either the
     * redeemer calls, or `signature` is the redeemer's EIP-712 `Refund(orderId)` signature (EOA or ERC-1271).
     */
    function instantRefund(bytes32 orderID, bytes calldata signature) external {
        Order storage order = _openOrder(orderID);
        if (msg.sender != order.redeemer) {
            if (!SignatureChecker.isValidSignatureNowCalldata(order.redeemer, instantRefundDigest(orderID), signature)) {
                revert NativeHTLC__InvalidRedeemerSignature();
            }
        }
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        Address.sendValue(payable(order.initiator), order.amount);
    }

    /// @notice The EIP-712 digest the redeemer signs to consent to an instant refund of `orderID`.
    function instantRefundDigest(bytes32 orderID) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, orderID)));
    }

    function _initiate(address initiator, address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash)
        private
    {
        if (redeemer == address(0)) revert NativeHTLC__ZeroAddressRedeemer();
        if (initiator == address(0)) revert NativeHTLC__ZeroAddressInitiator();
        if (initiator == redeemer) revert NativeHTLC__SameInitiatorAndRedeemer();
        if (timelock == 0) revert NativeHTLC__ZeroTimelock();
        if (amount == 0) revert NativeHTLC__ZeroAmount();
        if (msg.value != amount) revert NativeHTLC__IncorrectFundsReceived();
        bytes32 orderID = _orderId(secretHash, initiator, redeemer, timelock, amount);
        if (orders[orderID].initiator != address(0)) revert NativeHTLC__DuplicateOrder();
        orders[orderID] = Order(initiator, redeemer, block.number, timelock, amount, 0);
        emit Initiated(orderID, secretHash, amount);
    }

    function _openOrder(bytes32 orderID) private view returns (Order storage order) {
        order = orders[orderID];
        if (order.initiator == address(0)) revert NativeHTLC__OrderNotInitiated();
        if (order.fulfilledAt != 0) revert NativeHTLC__OrderFulfilled();
    }

    function _orderId(bytes32 secretHash, address initiator, address redeemer, uint256 timelock, uint256 amount)
        private
        view
        returns (bytes32)
    {
        return sha256(abi.encode(block.chainid, secretHash, initiator, redeemer, timelock, amount, address(this)));
    }
}
